# ggml's instruction sets, read from this machine's /proc/cpuinfo (GGML_NATIVE off). Included by
# CMakeLists.txt for the addon and given with `cmake -C` to the llama-server build of bench/peer.ts,
# so both run the same kernels. Intel AMX where the machine has it, unless -DDM_AMX=OFF: checked
# against the AVX-512 path in docs/performance.md.
set(GGML_NATIVE OFF CACHE BOOL "" FORCE)
if(EXISTS /proc/cpuinfo)
  file(STRINGS /proc/cpuinfo CPU_FLAGS REGEX "^flags" LIMIT_COUNT 1)
endif()
cmake_policy(SET CMP0057 NEW) # IN_LIST, also when read with `cmake -C`
if(CPU_FLAGS)
  string(REPLACE " " ";" CPU_FLAGS "${CPU_FLAGS}")
  foreach(pair sse4_2:SSE42 avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI
               avx512bw:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 flag)
    list(GET pair 1 option)
    if(flag IN_LIST CPU_FLAGS)
      set(GGML_${option} ON CACHE BOOL "")
    else()
      set(GGML_${option} OFF CACHE BOOL "")
    endif()
  endforeach()
endif()
if(NOT DEFINED DM_AMX)
  set(DM_AMX ON)
endif()
# The forced include is dropped first and added back only with AMX: a build folder configured by
# another checkout (the peer's, shared in the cache) or before AMX was turned off keeps no stale one.
string(REGEX REPLACE " *-include [^ ]*amx-tilecfg\\.h" "" DM_CXX_FLAGS "${CMAKE_CXX_FLAGS}")
if(DM_AMX AND "amx_tile" IN_LIST CPU_FLAGS AND "amx_int8" IN_LIST CPU_FLAGS AND "avx512_vnni" IN_LIST CPU_FLAGS)
  set(GGML_AMX_TILE ON CACHE BOOL "" FORCE)
  set(GGML_AMX_INT8 ON CACHE BOOL "" FORCE)
  # GCC drops the tile configuration's stores without this (native/amx-tilecfg.h). It only
  # redefines _tile_loadconfig, so every C++ file may see it; the other flags are kept.
  string(APPEND DM_CXX_FLAGS " -include ${CMAKE_CURRENT_LIST_DIR}/amx-tilecfg.h")
else()
  set(GGML_AMX_TILE OFF CACHE BOOL "" FORCE)
  set(GGML_AMX_INT8 OFF CACHE BOOL "" FORCE)
endif()
set(CMAKE_CXX_FLAGS "${DM_CXX_FLAGS}" CACHE STRING "" FORCE)
