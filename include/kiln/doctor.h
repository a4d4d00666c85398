// Doctor: can kiln run on this machine's GPU? Lists the GPUs and the versions of the driver,
// CUDA runtime, cuDNN and cuBLAS (built against vs found at run time), and every problem found
// with a plain-language fix. This is what `kiln doctor` prints. Never fails: a machine with no
// GPU or no driver gets a report that says so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct GpuDeviceInfo {
  int index = 0;
  std::string name;
  int sm = 0;  // compute capability as 10 * major + minor (90 for an H100/H200)
  uint64_t memory_bytes = 0;
};

struct DoctorProblem {
  bool fatal = false;  // kiln cannot use the GPU until it is fixed (else a warning)
  std::string what;
  std::string fix;
};

struct DoctorReport {
  bool cuda_built = false;  // false: this kiln was built without the CUDA backend
  std::string cuda_architectures;  // what the CUDA code was compiled for ("80;90")
  // Versions as dotted strings, "" when unknown (no driver, library not loadable).
  std::string driver_cuda_version;  // highest CUDA version the driver supports
  std::string runtime_built, runtime_found;
  std::string cudnn_built, cudnn_found;
  std::string cublas_built, cublas_found;
  std::vector<GpuDeviceInfo> gpus;
  std::string no_gpu_reason;  // why `gpus` is empty
  std::vector<DoctorProblem> problems;

  // True when the CUDA backend can run here (at least one GPU, no fatal problem).
  bool gpu_usable() const;
};

DoctorReport run_doctor();
// The report as `kiln doctor` prints it (several lines).
std::string format_doctor_report(const DoctorReport& report);

}  // namespace kiln
