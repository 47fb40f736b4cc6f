# The ctest label gpu-sim: everything the gpu label runs (the CUDA backend's GPU unit tests
# and the op harness with device=cuda, on_fallback=raise), the graph fuzzer on the device, and
# the Python GPU tests, run on
# the simulated CUDA device (docs/guide/testing.md) in four configurations. Included from
# the top-level CMakeLists after tests/ and python/, so that every target exists.
#
# Every run sets THEON_GPU_SIM=1: the tests then fail (not skip) without a device, and
# check that the libcudart actually loaded is the simulator's. A run that skipped a test
# or ran none also fails (FAIL_REGULAR_EXPRESSION): a green label that ran nothing is the
# failure to avoid.
if(NOT THEON_HAVE_CUDA_BACKEND OR NOT TARGET test_backends_cuda_gpu OR NOT TARGET test_op_harness
   OR NOT TARGET test_rewrite OR NOT TARGET test_contexts)
  return()
endif()

set(THEON_GPU_SIM_LIB_DIR ${CMAKE_BINARY_DIR}/gpu_sim/lib)  # as in tests/gpu_sim/CMakeLists.txt
set(_sim_compiledir ${CMAKE_BINARY_DIR}/gpu_sim/compiledir)  # simulated kernels, cached like real ones
set(_sim_common "LD_LIBRARY_PATH=${THEON_GPU_SIM_LIB_DIR}" "THEON_GPU_SIM=1" "SIM_DEVICES=2")
# name | simulator settings (comma-separated). Eager runs every dtype of every op; the slower orderings run
# one dtype per op (THEON_HARNESS_DTYPES=first) to keep the label inside its budget.
set(_sim_configs
  "eager|SIM_STREAMS=eager,SIM_P2P=1"
  "deferred-guard|SIM_STREAMS=deferred,SIM_GUARD=1,SIM_P2P=0,THEON_HARNESS_DTYPES=first"
  "reverse|SIM_ORDER=reverse,SIM_P2P=1,THEON_HARNESS_DTYPES=first"
  "random-seed1|SIM_STREAMS=random,SIM_SEED=1,SIM_P2P=1,THEON_HARNESS_DTYPES=first"
  "random-seed2|SIM_STREAMS=random,SIM_SEED=2,SIM_P2P=0,THEON_HARNESS_DTYPES=first"
  "random-seed3|SIM_STREAMS=random,SIM_SEED=3,SIM_P2P=1,THEON_HARNESS_DTYPES=first")

set(_sim_python "")
if(TARGET theon_core AND Python_EXECUTABLE)
  set(_sim_python ${Python_EXECUTABLE})
endif()

foreach(cfg IN LISTS _sim_configs)
  string(REPLACE "|" ";" cfg "${cfg}")
  list(GET cfg 0 name)
  list(GET cfg 1 settings)
  string(REPLACE "," ";" settings "${settings}")
  set(env ${_sim_common} ${settings})
  set(flags "cxx=,compiledir=${_sim_compiledir}")

  add_test(NAME gpu-sim.${name}.cuda_unit COMMAND $<TARGET_FILE:test_backends_cuda_gpu>)
  set_tests_properties(gpu-sim.${name}.cuda_unit PROPERTIES ENVIRONMENT "${env};THEON_FLAGS=${flags}")
  add_test(NAME gpu-sim.${name}.op_harness COMMAND $<TARGET_FILE:test_op_harness> --gtest_filter=Ops/*)
  set_tests_properties(gpu-sim.${name}.op_harness PROPERTIES
    ENVIRONMENT "${env};THEON_FLAGS=${flags},device=cuda,on_fallback=raise")
  # The graph fuzzer (docs/guide/testing.md, "Fuzzing"): device results against the CPU's. The
  # simulator compiles every fused kernel (about a second each): a few trials, cold in the
  # eager run and warm (the same seed, the same kernels) in the others.
  add_test(NAME gpu-sim.${name}.graph_fuzz COMMAND $<TARGET_FILE:test_rewrite> --gtest_filter=GraphFuzz.*)
  set_tests_properties(gpu-sim.${name}.graph_fuzz PROPERTIES
    ENVIRONMENT "${env};THEON_FUZZ_TRIALS=12;THEON_FLAGS=${flags},device=cuda,on_fallback=raise")
  # Contexts on GPUs (the seed program under two maps, host waits per call), on two devices
  # and, in the eager run, on three.
  add_test(NAME gpu-sim.${name}.contexts COMMAND $<TARGET_FILE:test_contexts> --gtest_filter=ContextGpu.*)
  set_tests_properties(gpu-sim.${name}.contexts PROPERTIES ENVIRONMENT "${env};THEON_FLAGS=${flags}")
  set(tests gpu-sim.${name}.cuda_unit gpu-sim.${name}.op_harness gpu-sim.${name}.graph_fuzz gpu-sim.${name}.contexts)
  if(name STREQUAL "eager")
    add_test(NAME gpu-sim.eager.contexts_3_devices COMMAND $<TARGET_FILE:test_contexts> --gtest_filter=ContextGpu.*)
    set_tests_properties(gpu-sim.eager.contexts_3_devices PROPERTIES
      ENVIRONMENT "${env};SIM_DEVICES=3;THEON_FLAGS=${flags}")
    list(APPEND tests gpu-sim.eager.contexts_3_devices)
  endif()
  if(_sim_python)
    add_test(NAME gpu-sim.${name}.python
      COMMAND ${_sim_python} -m pytest -q -p no:cacheprovider ${PROJECT_SOURCE_DIR}/tests/python/test_cuda.py
              ${PROJECT_SOURCE_DIR}/tests/python/test_contexts.py
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(gpu-sim.${name}.python PROPERTIES
      ENVIRONMENT "${env};THEON_FLAGS=${flags};THEANO_FLAGS=;THEON_PYTHONPATH=${CMAKE_BINARY_DIR}/python")
    list(APPEND tests gpu-sim.${name}.python)
  endif()
  set_tests_properties(${tests} PROPERTIES LABELS gpu-sim TIMEOUT 1800
    FAIL_REGULAR_EXPRESSION "\\[  SKIPPED \\]|\\] 0 tests from|[0-9]+ skipped|no tests ran")
  if(NOT name STREQUAL "eager")
    # The eager runs fill the kernel cache (two compiles at a time, one per run); the
    # others then start warm instead of compiling the same kernels again.
    foreach(t IN LISTS tests)
      string(REPLACE ".${name}." ".eager." first ${t})
      set_tests_properties(${t} PROPERTIES DEPENDS ${first})
    endforeach()
  endif()
endforeach()
