// Factories of every pass kiln has, one per pass file. The pipeline (pipeline.cpp) lists
// them in order per optimization level.
#pragma once
#include <memory>

#include "passes/pass.h"

namespace kiln::passes {

// Clean-ups and folding (-O1 and up).
std::unique_ptr<Pass> make_eliminate_noops();                  // eliminate_noops.cpp
std::unique_ptr<Pass> make_constant_folding();                 // constant_folding.cpp
std::unique_ptr<Pass> make_fold_shape_computations();          // fold_shape_computations.cpp
std::unique_ptr<Pass> make_eliminate_common_subexpressions();  // eliminate_common_subexpressions.cpp
std::unique_ptr<Pass> make_eliminate_dead_code();              // eliminate_dead_code.cpp

// Algebraic folds and fusions (-O2).
std::unique_ptr<Pass> make_fold_batchnorm();              // fold_batchnorm.cpp
std::unique_ptr<Pass> make_fold_channel_affine();         // fold_channel_affine.cpp
std::unique_ptr<Pass> make_matmul_add_to_gemm();          // matmul_add_to_gemm.cpp
std::unique_ptr<Pass> make_fuse_conv_bias_activation();   // fuse_conv_bias_activation.cpp
std::unique_ptr<Pass> make_fuse_gemm_activation();        // fuse_gemm_activation.cpp
std::unique_ptr<Pass> make_fuse_layernorm();              // fuse_layernorm.cpp
std::unique_ptr<Pass> make_fuse_gelu();                   // fuse_gelu.cpp
std::unique_ptr<Pass> make_fuse_softmax();                // fuse_softmax.cpp
std::unique_ptr<Pass> make_fuse_elementwise();            // fuse_elementwise.cpp
std::unique_ptr<Pass> make_assign_layout();               // assign_layout.cpp
std::unique_ptr<Pass> make_lower_precision();             // lower_precision.cpp
std::unique_ptr<Pass> make_pad_conv_channels();           // pad_conv_channels.cpp

}  // namespace kiln::passes
