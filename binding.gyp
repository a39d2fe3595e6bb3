# npm runs `node-gyp rebuild` for a package that has a binding.gyp and no install script, which
# is how a Node app that depends on decision-machine-1 builds it. The build itself belongs to
# CMake (llama.cpp and whisper.cpp are CMake projects: CPU feature detection, ggml backends, the
# CUDA option), so this file has one job: fetch the pinned sources and hand over to cmake-js.
{
  "targets": [
    {
      "target_name": "decision_machine",
      "type": "none",
      "actions": [
        {
          "action_name": "cmake_js_build",
          "inputs": ["CMakeLists.txt"],
          "outputs": ["build/Release/decision_machine.node"],
          "action": ["node", "native/build.mjs"]
        }
      ]
    }
  ]
}
