/* resnet.c - ResNet-50 v1.5 as a built-in layer list (layers.h).
 *
 * Architecture: He et al. 2016, "Deep Residual Learning for Image
 * Recognition" (CVPR), Table 1, 50-layer column: a 7x7/2 convolution of 64
 * channels, batch norm, ReLU, a 3x3/2 max pool, then four stages of 3, 4, 6
 * and 3 bottleneck blocks of width 64, 128, 256, 512 (1x1 to the width, 3x3,
 * 1x1 to 4x the width, batch norm after each convolution, ReLU, residual add),
 * global average pooling and a 1000-way fully connected layer, 224x224x3
 * input.  Version 1.5 as torchvision builds it (torchvision/models/resnet.py,
 * class Bottleneck: "places the stride for downsampling at 3x3 convolution
 * (self.conv2)"; NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets,
 * "ResNet50 v1.5"): the stride 2 of stages 2-4 is on the 3x3 convolution, and
 * the first block of every stage has a projection shortcut (1x1 convolution
 * with the block's stride + batch norm).  Convolutions have no bias; the fully
 * connected layer has one.
 *
 * Counts of this list: 25 557 032 trainable parameters (torchvision's
 * resnet50 model card: 25 557 032, exact), 53 120 batch-norm running
 * statistics, 4.09 GMAC (8.18 GFLOP) forward per image counting the
 * convolutions and the fully connected layer (torchvision: 4.09 GFLOPS,
 * meaning multiply-accumulates), 84.3 MB of kept fp32 activations per image
 * (each convolution's and batch norm's input, the pools', fc's, the loss's:
 * torchvision's ReLUs run in place, so they, the residual adds and the
 * shortcuts keep nothing of their own, no_saved_input).
 *
 * The list is sequential: a projection shortcut is a 1x1 convolution whose
 * input shape (h, w, c) is the block's input, which the following batch norm,
 * residual add and ReLU continue from (same output shape as the main branch).
 * The 3x3/2 max pool is a 2x2 pool in the list (the same output, 56x56; a
 * bytes-bound kernel either way).
 *
 * Framework operators per forward (eager PyTorch, torch/nn/modules):
 * convolution 1 (cudnn_convolution, no bias); batch norm 2 (in training
 * _BatchNorm.forward increments num_batches_tracked, one add_ kernel, before
 * cudnn_batch_norm); ReLU 1 (in place); residual add 1 (`out += identity`);
 * pools 1; linear 1 (addmm; flatten is a view); cross-entropy loss 1.
 */
#include "layers.h"

#define CONV(o, k, s) {.kind = PF_LY_CONV2D, .out = (o), .kernel = (k), .stride = (s), .no_bias = true}
#define BN {.kind = PF_LY_NORM, .batch_stats = true, .ops = 2}
#define RELU {.kind = PF_LY_ACT, .no_saved_input = true}  /* in place: keeps its output, the next layer's input */
#define ADD {.kind = PF_LY_ACT, .no_saved_input = true}   /* its gradient passes through to both branches */
/* main branch of a bottleneck of width p, stride s on the 3x3 (v1.5) */
#define MAIN(p, s) CONV(p, 1, 1), BN, RELU, CONV(p, 3, s), BN, RELU, CONV(4 * (p), 1, 1), BN
/* first block of a stage: projection shortcut from the block's input h x h x c */
#define FIRST(p, s, hw, cin) MAIN(p, s),                                                                  \
    {.kind = PF_LY_CONV2D, .out = 4 * (p), .kernel = 1, .stride = (s), .no_bias = true, .h = (hw), .w = (hw),  \
     .c = (cin), .no_saved_input = true}, BN, ADD, RELU
/* the other n - 1 blocks keep the shape: 10 layers repeated */
#define REST(p, n) {.kind = PF_LY_CONV2D, .out = (p), .kernel = 1, .no_bias = true, .repeat = (n) - 1, .span = 10}, \
    BN, RELU, CONV(p, 3, 1), BN, RELU, CONV(4 * (p), 1, 1), BN, ADD, RELU

const pf_net pf_resnet50_nets[] = {{.name = "resnet50", .h = 224, .w = 224, .c = 3, .fwd = 1, .dgrad = 1, .wgrad = 1,
                                    .opt = 1}, {.name = 0}};
const pf_layer pf_resnet50[] = {
    CONV(64, 7, 2), BN, RELU, {.kind = PF_LY_POOL, .kernel = 2}, /* 112 -> 56 */
    FIRST(64, 1, 56, 64), REST(64, 3),                          /* conv2_x: 56 x 56 x 256 */
    FIRST(128, 2, 56, 256), REST(128, 4),                       /* conv3_x: 28 x 28 x 512 */
    FIRST(256, 2, 28, 512), REST(256, 6),                       /* conv4_x: 14 x 14 x 1024 */
    FIRST(512, 2, 14, 1024), REST(512, 3),                      /* conv5_x: 7 x 7 x 2048 */
    {.kind = PF_LY_POOL, .kernel = 7},                          /* global average pool */
    {.kind = PF_LY_LINEAR, .out = 1000},                        /* fc */
    {.kind = PF_LY_ACT},                                        /* cross-entropy */
    {.kind = PF_LY_END}};
