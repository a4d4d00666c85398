#include "kiln/doctor.h"

#include <fmt/format.h>

#ifdef KILN_HAVE_CUDA
#include "backends/gpu/device.h"
#endif

namespace kiln {

bool DoctorReport::gpu_usable() const {
  if (!cuda_built || gpus.empty()) return false;
  for (const DoctorProblem& p : problems) {
    if (p.fatal) return false;
  }
  return true;
}

#ifdef KILN_HAVE_CUDA
namespace {

void check_versions(const gpu::LibraryVersions& v, DoctorReport* r) {
  auto problem = [r](bool fatal, std::string what, std::string fix) {
    r->problems.push_back({fatal, std::move(what), std::move(fix)});
  };
  if (v.driver == 0) {
    problem(true, "no NVIDIA driver is loaded",
            "install the NVIDIA driver (580 or newer for CUDA 13) and check that `nvidia-smi` lists the GPU");
  } else if (v.driver / 1000 < v.runtime_found / 1000) {
    problem(true,
            fmt::format("the driver supports CUDA {} but kiln uses the CUDA {} runtime",
                        gpu::cuda_version_string(v.driver), gpu::cuda_version_string(v.runtime_found)),
            fmt::format("update the NVIDIA driver to one that supports CUDA {}", gpu::cuda_version_string(v.runtime_found)));
  } else if (v.driver < v.runtime_found) {
    problem(false,
            fmt::format("the driver supports CUDA {}, older than the CUDA {} runtime (minor-version compatibility "
                        "mode: kernels that need PTX JIT may fail)",
                        gpu::cuda_version_string(v.driver), gpu::cuda_version_string(v.runtime_found)),
            "update the NVIDIA driver");
  }
  if (v.runtime_found != 0 && v.runtime_found < v.runtime_built) {
    problem(true,
            fmt::format("kiln was built against CUDA runtime {} but found {}", gpu::cuda_version_string(v.runtime_built),
                        gpu::cuda_version_string(v.runtime_found)),
            "put the CUDA runtime kiln was built with (libcudart) first on LD_LIBRARY_PATH, or rebuild kiln");
  }
  if (v.cudnn_found / 10000 != v.cudnn_built / 10000) {
    problem(true,
            fmt::format("kiln was built against cuDNN {} but found cuDNN {}", gpu::cudnn_version_string(v.cudnn_built),
                        gpu::cudnn_version_string(v.cudnn_found)),
            fmt::format("install cuDNN {}.x (libcudnn{}) or rebuild kiln against the installed one",
                        v.cudnn_built / 10000, v.cudnn_built / 10000));
  }
  if (v.cublas_found / 10000 != v.cublas_built / 10000) {
    problem(true,
            fmt::format("kiln was built against cuBLAS {} but found cuBLAS {}", gpu::cublas_version_string(v.cublas_built),
                        gpu::cublas_version_string(v.cublas_found)),
            "install the cuBLAS of kiln's CUDA version or rebuild kiln");
  }
}

// The lowest architecture the build has code for; older GPUs cannot run it.
int min_built_sm(const std::string& archs) {
  int lowest = 0;
  size_t pos = 0;
  while (pos < archs.size()) {
    size_t end = archs.find(',', pos);
    if (end == std::string::npos) end = archs.size();
    try {
      const int a = std::stoi(archs.substr(pos, end - pos));
      if (lowest == 0 || a < lowest) lowest = a;
    } catch (const std::exception&) {
      // "native" or "all": no known floor
    }
    pos = end + 1;
  }
  return lowest;
}

}  // namespace

DoctorReport run_doctor() {
  DoctorReport r;
  r.cuda_built = true;
#ifdef KILN_CUDA_ARCHITECTURES
  r.cuda_architectures = KILN_CUDA_ARCHITECTURES;  // "80,90"
#endif
  const gpu::LibraryVersions v = gpu::library_versions();
  if (v.driver) r.driver_cuda_version = gpu::cuda_version_string(v.driver);
  r.runtime_built = gpu::cuda_version_string(v.runtime_built);
  if (v.runtime_found) r.runtime_found = gpu::cuda_version_string(v.runtime_found);
  r.cudnn_built = gpu::cudnn_version_string(v.cudnn_built);
  if (v.cudnn_found) r.cudnn_found = gpu::cudnn_version_string(v.cudnn_found);
  r.cublas_built = gpu::cublas_version_string(v.cublas_built);
  if (v.cublas_found) r.cublas_found = gpu::cublas_version_string(v.cublas_found);

  const int n = gpu::device_count(&r.no_gpu_reason);
  const int floor = min_built_sm(r.cuda_architectures);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    GpuDeviceInfo g{i, p.name, p.major * 10 + p.minor, static_cast<uint64_t>(p.totalGlobalMem)};
    if (floor && g.sm < floor) {
      r.problems.push_back({false, fmt::format("GPU {} ({}) is sm_{}, older than the oldest architecture kiln was built for (sm_{})", i, g.name, g.sm, floor),
                            fmt::format("rebuild with -DCMAKE_CUDA_ARCHITECTURES={}", g.sm)});
    }
    r.gpus.push_back(std::move(g));
  }
  if (n == 0) {
    r.problems.push_back({true, "no GPU: " + r.no_gpu_reason,
                          "run on a machine with an NVIDIA GPU (sm_80 or newer) and its driver; use --backend cpu here"});
  }
  check_versions(v, &r);
  return r;
}

#else

DoctorReport run_doctor() {
  DoctorReport r;
  r.no_gpu_reason = "this kiln was built without the CUDA backend";
  r.problems.push_back({true, r.no_gpu_reason, "rebuild with -DKILN_CUDA=ON on a machine with the CUDA toolkit, cuDNN 9 and cuBLASLt"});
  return r;
}

#endif

std::string format_doctor_report(const DoctorReport& r) {
  auto or_none = [](const std::string& s) { return s.empty() ? std::string("not found") : s; };
  std::string out;
  if (r.cuda_built) {
    out += fmt::format("kiln CUDA backend: built for sm {}\n", r.cuda_architectures.empty() ? "?" : r.cuda_architectures);
    out += fmt::format("  driver supports CUDA {}\n", or_none(r.driver_cuda_version));
    out += fmt::format("  CUDA runtime  built {:<8} found {}\n", r.runtime_built, or_none(r.runtime_found));
    out += fmt::format("  cuDNN         built {:<8} found {}\n", r.cudnn_built, or_none(r.cudnn_found));
    out += fmt::format("  cuBLAS        built {:<8} found {}\n", r.cublas_built, or_none(r.cublas_found));
  } else {
    out += "kiln CUDA backend: not built\n";
  }
  if (r.gpus.empty()) {
    out += fmt::format("GPUs: none ({})\n", r.no_gpu_reason);
  } else {
    out += "GPUs:\n";
    for (const GpuDeviceInfo& g : r.gpus) {
      out += fmt::format("  {}: {}, sm_{}, {:.1f} GiB\n", g.index, g.name, g.sm,
                         static_cast<double>(g.memory_bytes) / (1024.0 * 1024.0 * 1024.0));
    }
  }
  for (const DoctorProblem& p : r.problems) {
    out += fmt::format("{}: {}\n  fix: {}\n", p.fatal ? "problem" : "warning", p.what, p.fix);
  }
  out += r.gpu_usable() ? "result: kiln can run on the GPU\n" : "result: kiln cannot run on the GPU (the CPU backend works)\n";
  return out;
}

}  // namespace kiln
