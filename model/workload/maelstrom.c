/* maelstrom.c - the MAELSTROM D3.7 applications as built-in layer lists
 * (layers.h): the report's descriptions (seed text 001_dfe9b61861599094.txt,
 * cited as 001:LINE) and the applications' own code (AP1, AP5; AP2 from its
 * published architecture).  How close each comes is written at its list.
 */
#include "layers.h"

#define CONV(o) {.kind = PF_LY_CONV2D, .out = (o)}
#define BN {.kind = PF_LY_NORM, .batch_stats = true}
#define LN {.kind = PF_LY_NORM}
#define ACT {.kind = PF_LY_ACT}
#define POOL {.kind = PF_LY_POOL}
#define CAT(o) {.kind = PF_LY_CONCAT, .out = (o)}
#define END {.kind = PF_LY_END}

/* AP1 U-Net (001:586-593): input 256 x 256 x 17, 1 314 019 trainable and 6 016 non-trainable parameters,
 * batch normalisation in each level (001:582), quantile loss at 10/50/90 % (three outputs).  The network is the
 * application's own: metno/maelstrom-train@c87b656 (2024-02-13) benchmark/benchmark.py, the script its
 * jube/d3-7.yaml runs for the D3.7 tables, builds Unet(input_shape, 3, layers=6) with its defaults: features 16
 * doubling over 6 levels, conv_size 1 on a (lead time 1, y, x) input, so the blocks' Conv3D are pointwise
 * (kernel [1, 1, 1]: a 1x1 convolution); a conv block is two of them, each followed by batch norm without scale
 * and centre (scale=False, center=False) and ReLU; max pooling [1, 2, 2]; each decoder level a 1x1 convolution
 * with ReLU, nearest upsampling, a [1, 2, 2] convolution with ReLU ("learnable bilinear interpolation"), the
 * skip concatenated and a conv block; a dense 3 on every pixel.  The convolutions are Keras Conv3D (`conv3d`,
 * layers.h).  1 314 019 trainable and 6 016 non-trainable parameters, both exactly the report's.  TensorFlow 2
 * with Horovod, one process per GPU (Table 6: 4 MPI tasks for 4 GPUs, 001:1704), each reading batches of 32
 * (benchmark.py: Ap1Loader's batch_size per process; the rows' per-GPU batch, docs/validation.md). */
const pf_net pf_maelstrom_ap1_nets[] = {{.name = "unet", .h = 256, .w = 256, .c = 17, .fwd = 1, .dgrad = 1, .wgrad = 1,
                                         .opt = 1}, {.name = 0}};
#define PW(o) {.kind = PF_LY_CONV2D, .out = (o), .kernel = 1, .conv3d = true}
#define BN0 {.kind = PF_LY_NORM, .batch_stats = true, .no_bias = true}
#define PW_BLOCK(o) PW(o), BN0, ACT, PW(o), BN0, ACT
#define CONV2X2(o) {.kind = PF_LY_CONV2D, .out = (o), .kernel = 2, .conv3d = true}
#define UP_LEVEL(o) PW(o), ACT, {.kind = PF_LY_UPSAMPLE}, CONV2X2(o), ACT, CAT(o), PW_BLOCK(o)
const pf_layer pf_maelstrom_ap1_unet[] = {
    PW_BLOCK(16), POOL, PW_BLOCK(32), POOL, PW_BLOCK(64), POOL, PW_BLOCK(128), POOL, PW_BLOCK(256), POOL,
    PW_BLOCK(512),
    UP_LEVEL(256), UP_LEVEL(128), UP_LEVEL(64), UP_LEVEL(32), UP_LEVEL(16),
    {.kind = PF_LY_LINEAR, .out = 3},
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

/* AP5 WGAN for downscaling (001:1284-1322): a U-Net generator and a critic, 9 332 299 trainable and 5 280
 * non-trainable parameters, input 96 x 120 x 15, Swish activations, sub-pixel upsampling in the decoder
 * (001:1289), TensorFlow 2.6 with Keras (001:1285), Horovod for several GPUs (001:1309).  The networks are the
 * application's own code, mlangguth89/downscaling_benchmark (the MAELSTROM AP5 repository, MIT), branch develop
 * at 3712347a (2024-01-28; the report, written in the weeks after, cites an e-mail of 9 February, 001:1289), with
 * the benchmark settings of its JUBE file (downscaling_ap5/jube/downscaling_benchmark.yaml,
 * config_wgan_benchmark.json: d_steps 5, z_branch true; config_ds_tier2.json: batch 32):
 *  - generator, models/unet_model.py UNet_Sha with its defaults (channels_start 56, swish, batch norm, average
 *    pooling, l_subpixel, z_branch): encoder two conv blocks of 56 then one of 112 and one of 224, each pooled,
 *    a bridge block of 448; each decoder level a sub-pixel block (a 3x3 convolution to 4 C channels, Swish,
 *    depth to space: subpixel_block), the skip concatenated, two conv blocks of C; two 1x1 outputs (the
 *    temperature and the surface height of the z branch).  A conv block is a 3x3 convolution, batch norm and
 *    Swish (conv_block).  7 747 658 trainable parameters, 1 680 normalised channels.
 *  - critic, models/wgan_model.py Critic_Simple with its defaults (num_conv 4, channels_start 64, 3x3 stride 2,
 *    batch norm, swish) on the dynamic predictand alone (one channel): four conv blocks of 64, 128, 256, 512,
 *    global average pooling, dense 64 with Swish, dense 1.  1 584 641 trainable parameters, 960 normalised
 *    channels.
 * Together 9 332 299 trainable and 5 280 non-trainable parameters, both exactly the report's.
 * A step (WGAN_Model.train_step) updates the critic 5 times, each on its own slice of the 192-sample batch:
 * the generator forward, the critic on generated, real and interpolated samples, the gradient penalty's input
 * gradient and its double backward; then the generator on the last slice, forward and backward through the
 * critic into the generator.  Passes through the critic: forward 5 x 3 + 1; data gradients 5 x 4 + 1 (the
 * penalty's input gradient, the backward of the generated, real and interpolated forwards, and the generator
 * update's way through the critic); weight gradients 5 x 3; second order 5 (the penalty's double backward, the
 * gradient of its input gradient through the critic: layers.c second order; measured on an H100, it is about
 * half of a critic update, docs/model.md "AP5's step measured whole"). */
const pf_net pf_maelstrom_ap5_nets[] = {
    {.name = "generator", .h = 96, .w = 120, .c = 15, .fwd = 6, .dgrad = 1, .wgrad = 1, .opt = 1},
    {.name = "critic", .h = 96, .w = 120, .c = 1, .fwd = 16, .dgrad = 21, .wgrad = 15, .opt = 5, .ggrad = 5},
    {.name = 0}};
/* Swish in TensorFlow 2.6 is x * sigmoid(x): two element-wise operators (tf.nn.silu) */
#define SWISH {.kind = PF_LY_ACT, .ops = 2}
#define SCONV(o) CONV(o), BN, SWISH
#define SUBPIXEL(o) CONV(4 * (o)), SWISH, {.kind = PF_LY_UPSAMPLE, .subpixel = true}
#define CRITIC(o) {.kind = PF_LY_CONV2D, .net = 1, .out = (o), .stride = 2}, {.kind = PF_LY_NORM, .net = 1, \
    .batch_stats = true}, {.kind = PF_LY_ACT, .net = 1, .ops = 2}
const pf_layer pf_maelstrom_ap5_wgan[] = {
    SCONV(56), SCONV(56), POOL, SCONV(112), POOL, SCONV(224), POOL,
    SCONV(448),
    SUBPIXEL(224), CAT(224), SCONV(224), SCONV(224),
    SUBPIXEL(112), CAT(112), SCONV(112), SCONV(112),
    SUBPIXEL(56), CAT(56), SCONV(56), SCONV(56),
    {.kind = PF_LY_CONV2D, .out = 2, .kernel = 1}, /* the temperature and z-branch outputs, 1x1 each */
    ACT, /* L1 + adversarial loss */
    CRITIC(64), CRITIC(128), CRITIC(256), CRITIC(512),
    {.kind = PF_LY_POOL, .net = 1, .kernel = 8}, /* global average pooling of 6 x 8 */
    {.kind = PF_LY_LINEAR, .net = 1, .out = 64}, {.kind = PF_LY_ACT, .net = 1, .ops = 2},
    {.kind = PF_LY_LINEAR, .net = 1, .out = 1}, {.kind = PF_LY_ACT, .net = 1}, /* Wasserstein loss */
    END};
