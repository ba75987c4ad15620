/* maelstrom.c - the MAELSTROM D3.7 applications as built-in layer lists
 * (layers.h), from the report's descriptions (seed text
 * 001_dfe9b61861599094.txt, cited as 001:LINE).  Where the report gives only
 * the parameter count, the architecture is a standard one of the kind it
 * names with its widths chosen to reproduce that count; how close each comes
 * is written at its list.
 */
#include "layers.h"

#define CONV(o) {.kind = PF_LY_CONV2D, .out = (o)}
#define CONVS(o, s) {.kind = PF_LY_CONV2D, .out = (o), .stride = (s)}
#define BN {.kind = PF_LY_NORM, .batch_stats = true}
#define LN {.kind = PF_LY_NORM}
#define ACT {.kind = PF_LY_ACT}
#define POOL {.kind = PF_LY_POOL}
#define CAT(o) {.kind = PF_LY_CONCAT, .out = (o)}
#define BLOCK(o) CONV(o), BN, ACT, CONV(o), BN, ACT
#define END {.kind = PF_LY_END}

/* AP1 U-Net (001:586-589, 600-606): input 256 x 256 x 17, 1 314 019 trainable
 * parameters, batch normalisation in each level (001:582), quantile loss at
 * 10/50/90 % (three outputs).  Reconstructed as a 3-level U-Net with a bridge,
 * two 3x3 convolution + batch norm + activation per block, 25 channels doubling
 * per level, 3x3 stride-2 transposed convolutions up, 1x1 output to 3
 * channels: 1 312 378 trainable parameters (-0.12 %).  (Its 2 200 batch-norm
 * statistics differ from the 6 016 non-trainable parameters stated: the
 * report's network has more normalised channels than this reconstruction.)
 * Framework: TensorFlow assumed (the report does not name it for AP1); one
 * process per GPU (Table 6: 4 MPI tasks for 4 GPUs, 001:1704). */
const pf_net pf_maelstrom_ap1_nets[] = {{.name = "unet", .h = 256, .w = 256, .c = 17, .fwd = 1, .dgrad = 1, .wgrad = 1,
                                         .opt = 1}, {.name = 0}};
const pf_layer pf_maelstrom_ap1_unet[] = {
    BLOCK(25), POOL, BLOCK(50), POOL, BLOCK(100), POOL,
    BLOCK(200),
    {.kind = PF_LY_CONVT2D, .out = 100}, CAT(100), BLOCK(100),
    {.kind = PF_LY_CONVT2D, .out = 50}, CAT(50), BLOCK(50),
    {.kind = PF_LY_CONVT2D, .out = 25}, CAT(25), BLOCK(25),
    {.kind = PF_LY_CONV2D, .out = 3, .kernel = 1},
    ACT, /* quantile loss */
    END};

/* AP2 DeBERTa-v3-small fine-tuned as a two-class classifier (001:742-760):
 * 141 896 450 trainable parameters, the embedding 128 100 x 768 = 98.4 M of
 * them ("input shape (128100, 768)").  Architecture of deberta-v3-small (He et
 * al. 2021, DeBERTaV3; its released config: 6 layers, hidden 768, 12 heads,
 * FFN 3072, 256 position buckets -> 512 relative positions, shared attention
 * keys), Hugging Face's sequence-classification head (pooler 768 x 768, tanh,
 * classifier 768 x 2): exactly 141 896 450 parameters.  Tokens per tweet: 64
 * assumed (the report does not give the sequence length; the application's
 * tokenizer pads each 1000-tweet map batch to its longest tweet,
 * src/a2/training/dataset_hugging.py padding=True, so the length is that of
 * long tweets, not the mean).  PyTorch (001:752) through the Hugging Face
 * Trainer in fp16 mixed precision on every GPU (4castRenewables/maelstrom-a2
 * @ dcec32d, the D3.7 benchmark branch: finetune_deberta_classifier.py:141
 * fp16=True if cuda_available(); training_hugging.py TrainingArguments(fp16=
 * fp16)): its validation rows run at --precision fp16 (autocast, layers.c);
 * the multi-GPU runs use one process (#MPI tasks 1, Table 12, 001:1884),
 * i.e. torch.nn.DataParallel. */
/* Eager operators per forward, counted in Hugging Face's DebertaV2 code (modeling_deberta_v2.py): a linear on
 * a 3-D input is view + addmm + view (3); transpose_for_scores view, permute, contiguous, view (4) for q, k, v
 * and the relative-position keys and queries; build_relative_position's log buckets (~15) in every layer;
 * c2p and p2c: bmm, clamp, expand, gather, scale (~10 each); XSoftmax and XDropout (~5 each); context
 * bmm and reshapes (5); the output dense and its dropout + residual + LayerNorm: ~105 for the attention
 * block, 6 for StableDropout + residual add. */
#define OPS_ATTN 105
#define DROP_ADD {.kind = PF_LY_ACT, .ops = 6}
const pf_net pf_maelstrom_ap2_nets[] = {{.name = "deberta", .h = 64, .w = 1, .c = 1, .fwd = 1, .dgrad = 1, .wgrad = 1,
                                         .opt = 1}, {.name = 0}};
const pf_layer pf_maelstrom_ap2_deberta[] = {
    {.kind = PF_LY_EMBEDDING, .vocab = 512, .out = 768, .h = 512, .c = 1}, /* relative-position embeddings */
    LN,
    {.kind = PF_LY_EMBEDDING, .vocab = 128100, .out = 768, .h = 64, .c = 1}, /* word embeddings */
    LN, ACT, /* embedding LayerNorm, dropout */
    {.kind = PF_LY_ATTENTION, .heads = 12, .rel_pos = 512, .repeat = 6, .span = 8, .ops = OPS_ATTN},
    DROP_ADD, LN,
    {.kind = PF_LY_LINEAR, .out = 3072, .ops = 3}, ACT, {.kind = PF_LY_LINEAR, .out = 768, .ops = 3}, DROP_ADD, LN,
    {.kind = PF_LY_LINEAR, .h = 1, .c = 768, .out = 768}, ACT, /* pooler on the [CLS] token, tanh */
    {.kind = PF_LY_LINEAR, .out = 2}, ACT,                     /* classifier, cross-entropy */
    END};

/* AP5 WGAN for downscaling (001:1284-1322): a U-Net generator and a critic,
 * 9 332 299 trainable and 5 280 non-trainable parameters, input 96 x 120 x 15,
 * Swish activations, sub-pixel upsampling in the decoder (001:1289).  The
 * 5 280 batch-norm statistics fix the generator's normalised channels at
 * 2 640 = 2 x 22 x 60: a 3-level U-Net with a bridge, 60 channels doubling
 * per level, two 3x3 convolution + batch norm + Swish per block, 2x2
 * convolutions to 4C channels then depth-to-space up, 1x1 output (the 2 m
 * temperature): 8 592 961 parameters.  The critic (no batch norm: it is
 * trained with a gradient penalty) takes the 15 predictors and the target,
 * three 3x3 stride-2 convolutions of 64, 128, 256 channels, dense 8, dense 1:
 * 746 961.  Together 9 339 922 (+0.08 %), 5 280 statistics (exact).
 * A step updates the critic 5 times per generator update (001:1309); each
 * critic update runs the generator forward, the critic on real, generated and
 * interpolated samples, the gradient penalty's input gradient and its double
 * backward; the generator update runs both networks forward and backward
 * through the critic into the generator.  TensorFlow 2.6 with Keras (001:1285),
 * Horovod for several GPUs (001:1309). */
const pf_net pf_maelstrom_ap5_nets[] = {
    {.name = "generator", .h = 96, .w = 120, .c = 15, .fwd = 6, .dgrad = 1, .wgrad = 1, .opt = 1},
    {.name = "critic", .h = 96, .w = 120, .c = 16, .fwd = 16, .dgrad = 21, .wgrad = 15, .opt = 5},
    {.name = 0}};
#define SUBPIXEL(o) {.kind = PF_LY_CONV2D, .out = 4 * (o), .kernel = 2}, \
                    {.kind = PF_LY_UPSAMPLE, .subpixel = true}
/* Swish in TensorFlow 2.6 is x * sigmoid(x): two element-wise operators (tf.nn.silu) */
#define SWISH {.kind = PF_LY_ACT, .ops = 2}
#define SBLOCK(o) CONV(o), BN, SWISH, CONV(o), BN, SWISH
const pf_layer pf_maelstrom_ap5_wgan[] = {
    SBLOCK(60), POOL, SBLOCK(120), POOL, SBLOCK(240), POOL,
    SBLOCK(480),
    SUBPIXEL(240), CAT(240), SBLOCK(240),
    SUBPIXEL(120), CAT(120), SBLOCK(120),
    SUBPIXEL(60), CAT(60), SBLOCK(60),
    {.kind = PF_LY_CONV2D, .out = 1, .kernel = 1},
    ACT, /* L1 + adversarial loss */
    {.kind = PF_LY_CONV2D, .net = 1, .out = 64, .stride = 2}, {.kind = PF_LY_ACT, .net = 1, .ops = 2},
    {.kind = PF_LY_CONV2D, .net = 1, .out = 128, .stride = 2}, {.kind = PF_LY_ACT, .net = 1, .ops = 2},
    {.kind = PF_LY_CONV2D, .net = 1, .out = 256, .stride = 2}, {.kind = PF_LY_ACT, .net = 1, .ops = 2},
    {.kind = PF_LY_LINEAR, .net = 1, .h = 1, .w = 1, .c = 12 * 15 * 256, .out = 8}, {.kind = PF_LY_ACT, .net = 1},
    {.kind = PF_LY_LINEAR, .net = 1, .out = 1}, {.kind = PF_LY_ACT, .net = 1}, /* Wasserstein loss */
    END};
