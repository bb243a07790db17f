// The team a row-wise rung gives each row: TEAM = BLOCK_X / ROWS_PER_BLOCK consecutive threads,
// whole warps, take one of the block's ROWS_PER_BLOCK rows (the manifests' `team` constraint set,
// asserted here for every configuration the tuner compiles). A rung of a thread a row (softmax_01)
// has no team and does not include this.
#pragma once

constexpr int TEAM = BLOCK_X / ROWS_PER_BLOCK;
static_assert(BLOCK_X % ROWS_PER_BLOCK == 0 && TEAM % 32 == 0, "whole warps a row");
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
