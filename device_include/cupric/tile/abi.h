/* cupric/tile/abi.h — the C interface between cupric's host runtime and a compiled CPU tile
   kernel (a shared object): how arrays, the grid and failures are passed. Plain C types only. */
#pragma once

#define CUPRIC_TILE_MAX_DIMS 8

/** One array argument: the address of element [0, ..., 0], extents, strides in elements. */
typedef struct cupric_tile_array {
  void* data;
  long long shape[CUPRIC_TILE_MAX_DIMS];
  long long strides[CUPRIC_TILE_MAX_DIMS];
} cupric_tile_array;

/** Kinds of failure: a ct.assert_, and a debug build's bounds check (IndexError). */
#define CUPRIC_TILE_ASSERT_FAILED 1
#define CUPRIC_TILE_BOUNDS_FAILED 2

/** Where a block reports a failed ct.assert_ or bounds check (the first failure wins). */
typedef struct cupric_tile_status {
  int failed; /**< 0, or one of the kinds above */
  long long block[3];
  char message[400];
} cupric_tile_status;

/** The entry every CPU kernel exports as `cupric_tile_entry`: runs blocks [begin, end) of the
    grid, numbered as CUDA does (axis 0 fastest). args[i] points at a cupric_tile_array for arrays and at
    the value (8 bytes, zero-extended) for scalars. */
typedef void (*cupric_tile_entry_fn)(void* const* args, const long long* grid, long long begin, long long end,
                                     cupric_tile_status* status);
