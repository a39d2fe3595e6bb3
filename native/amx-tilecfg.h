// Forced into ggml-cpu's AMX kernels (amx/mmq.cpp) when DM_AMX is on; see CMakeLists.txt and
// docs/performance.md. GCC 12's _tile_loadconfig tells the compiler that ldtilecfg reads 8 bytes
// ("m" (*(const void **)cfg)) of the 64-byte tile configuration, so at -O2 and above the stores of
// rows and colsb are dropped as dead and every thread loads palette 1 with all tiles 0 x 0. This
// macro makes the asm read all 64 bytes; the rest of the vendored source is unchanged.
#pragma once
#include <immintrin.h>
#undef _tile_loadconfig
#define _tile_loadconfig(cfg) __asm__ volatile("ldtilecfg\t%X0" ::"m"(*(const unsigned char(*)[64])(cfg)))
