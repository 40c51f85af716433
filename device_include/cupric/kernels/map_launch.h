// cupric/kernels/map_launch.h — how a map kernel's launch covers its n elements: threads per block
// and elements per thread of each path, read by map.cuh (NVRTC) and by the launcher
// (src/backend/cuda/elementwise.cpp), so that the grid the host sizes is the one the kernel walks.
#pragma once

namespace cupric::kernels {

/// `_vec` gives each thread one 16-byte vector per operand, `_one` kOnePerThread elements spaced a
/// block apart (each load instruction of a warp stays coalesced), `_nd` one element. The grid
/// covers the array in one pass, as PyTorch's elementwise kernels do: the hardware hands small
/// blocks to whichever multiprocessor is free. A grid-stride loop over a grid capped at 8 blocks
/// of 256 per multiprocessor gave each block a fixed share instead, and ran 0.91 x PyTorch on the
/// H200 (docs/performance.md, "Eager elementwise on the H200"). The kernels still stride over the
/// grid, so a grid clamped to 2^31 - 1 blocks stays correct.
constexpr int kVecThreads = 128, kOneThreads = 128, kOnePerThread = 4, kNdThreads = 256;

}  // namespace cupric::kernels
