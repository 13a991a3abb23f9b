// Eigen types shared by the layers. Everything is row-major float32 so that a [rows, cols] matrix is
// laid out exactly like PyTorch's contiguous tensors and like the WASM heap buffers that JS hands us.
#pragma once

#include "eigen.h"

namespace attnlab {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using VectorMap = Eigen::Map<RowVector>;
using ConstVectorMap = Eigen::Map<const RowVector>;
using MatrixRef = Eigen::Ref<RowMatrix>;
using ConstMatrixRef = const Eigen::Ref<const RowMatrix>&;

}  // namespace attnlab
