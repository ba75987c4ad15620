"""gen_validation_csv.py OUT BYTES - a validation CSV of about BYTES bytes for the
streaming test (validate_stream.sh): four configurations of a small model on
JUWELS Booster, two metrics, rows with a 1.4 kB note (quoted, with a comma)."""
import sys
out = sys.argv[1]; target = int(sys.argv[2])
hdr = "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,notes,use,tag"
configs = [("juwels-booster,gpt3-1.3b,,,,,,%d,,2,1,,4,256,bf16,false,false,none,1f1b" % n) for n in (1, 2, 4, 8)]
metrics = [("iteration_time_s", "%g", "s"), ("tflops_per_gpu", "%g", "TFLOP/s")]
note = "generated row " + "x" * 1400
with open(out, "w") as f:
    f.write("# generated: %d bytes of rows for the streaming test\n" % target)
    f.write(hdr + "\n")
    size, i = 0, 0
    while size < target:
        c = configs[i % 4]; m, fmt, u = metrics[(i // 4) % 2]
        line = '%s,%s,%s,%s,,generated row %d,"%s, a note with a comma",%s,tag%d\n' % (c, m, fmt % (1 + i % 97), u, i, note, "fit" if i % 3 else "check", i % 5)
        f.write(line); size += len(line); i += 1
print(i, "rows")
