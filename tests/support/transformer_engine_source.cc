#include "support/transformer_engine_source.h"

namespace envdoctor::test {

namespace {

// What the f-strings put after a library's name: the extension as _get_sys_extension() gives it.
std::string ext(const TePerLibraryShape& shape) {
  return shape.dotless_extension ? ".{_get_sys_extension()}" : "{_get_sys_extension()}";
}

// The recursive glob below a variable's value, its stubs (and `also`) dropped where asked.
std::string home_glob(const std::string& var, const std::string& lib, const std::string& indent,
                      const std::string& drop, const TePerLibraryShape& shape) {
  std::string out = indent + "libs = glob.glob(f\"{" + var + "}/**/lib" + lib + ext(shape) + "*\", recursive=True)\n";
  if (!drop.empty()) out += indent + "libs = list(filter(lambda x: not (" + drop + "), libs))\n";
  return out + indent + "libs.sort(reverse=True, key=os.path.basename)\n" + indent + "if libs:\n" + indent +
         "    return ctypes.CDLL(libs[0], mode=ctypes.RTLD_GLOBAL)\n";
}

// ldconfig's lines, the first naming the library (and "=>") opened.
std::string ldconfig_step(const std::string& lib, const TePerLibraryShape& shape) {
  std::string out = "    # ldconfig's view of the cache\n";
  bool prefix = lib == "nvrtc" && shape.nvrtc_grep_prefix;
  if (shape.ldconfig_list) out += "    libs = subprocess.check_output([\"ldconfig\", \"-p\"])\n";
  else if (prefix) out += "    libs = subprocess.check_output(\"ldconfig -p | grep 'libnvrtc'\", shell=True)\n";
  else
    out += "    libs = subprocess.check_output(\n        f\"ldconfig -p | grep 'lib" + lib + ext(shape) +
           "'\", shell=True\n    )\n";
  out += "    libs = libs.decode(\"utf-8\").split(\"\\n\")\n    sos = []\n    for lib in libs:\n";
  if (prefix) out += "        if \"stub\" in lib or \"libnvrtc-builtins\" in lib:\n            continue\n";
  return out + "        if \"lib" + lib + "\" in lib and \"=>\" in lib:\n" +
         "            sos.append(lib.split(\">\")[1].strip())\n    if sos:\n"
         "        return ctypes.CDLL(sos[0], mode=ctypes.RTLD_GLOBAL)\n";
}

// _load_LIB: [its own variables,] the toolkit's, its wheel folder, [ldconfig,] the bare name.
std::string load_function(const std::string& lib, const std::string& folder, const std::string& drop, bool own,
                          bool ldconfig, const TePerLibraryShape& shape) {
  std::string out = "\n\n@functools.lru_cache(maxsize=None)\ndef _load_" + lib + "():\n    \"\"\"" + lib +
                    ", found as this release finds it.\"\"\"\n";
  if (own) {
    std::string upper = lib == "cudnn" ? "CUDNN" : lib;
    out += "    " + lib + "_home = os.environ.get(\"" + upper + "_HOME\") or os.environ.get(\"" + upper + "_PATH\")\n";
    out += "    if " + lib + "_home:\n" + home_glob(lib + "_home", lib, "        ", drop, shape) + "\n";
  }
  out += "    cuda_home = os.environ.get(\"CUDA_HOME\") or os.environ.get(\"CUDA_PATH\") or \"/usr/local/cuda\"\n";
  out += home_glob("cuda_home", lib, "    ", own ? "" : drop, shape) + "\n";
  out += "    found, handle = _load_nvidia_cuda_library(\"" + folder + "\")\n    if found:\n        return handle\n\n";
  if (ldconfig) out += ldconfig_step(lib, shape) + "\n";
  return out + "    return ctypes.CDLL(f\"lib" + lib + ext(shape) + "\", mode=ctypes.RTLD_GLOBAL)\n";
}

}  // namespace

std::string te_per_library_init(const TePerLibraryShape& shape) {
  std::string out =
      "import ctypes\nimport functools\nimport glob\nimport os\nimport platform\nimport subprocess\n"
      "import sysconfig\n\n\ndef _get_sys_extension():\n    system = platform.system()\n\n"
      "    if system == \"Linux\":\n";
  out += shape.dotless_extension ? "        extension = \"so\"\n    else:\n        raise RuntimeError(system)\n\n"
                                   "    return extension\n"
                                 : "        return \".so\"\n    raise RuntimeError(system)\n";
  out +=
      "\n\n@functools.lru_cache(maxsize=None)\ndef _load_nvidia_cuda_library(lib_name: str):\n"
      "    \"\"\"\n    Every library of a wheel's folder under site-packages/nvidia.\n    \"\"\"\n"
      "    so_paths = glob.glob(\n        os.path.join(\n            sysconfig.get_path(\"purelib\"),\n"
      "            f\"nvidia/{lib_name}/lib/lib*" +
      ext(shape) +
      ".*[0-9]\",\n        )\n    )\n\n    path_found = len(so_paths) > 0\n    ctypes_handles = []\n\n"
      "    if path_found:\n        for so_path in so_paths:\n"
      "            ctypes_handles.append(ctypes.CDLL(so_path, mode=ctypes.RTLD_GLOBAL))\n\n"
      "    return path_found, ctypes_handles\n";
  out += load_function("cudnn", "cudnn", "", true, shape.cudnn_ldconfig, shape);
  out += load_function("nvrtc", "cuda_nvrtc", "\"stub\" in x or \"libnvrtc-builtins\" in x", false, true, shape);
  if (shape.curand) out += load_function("curand", "curand", "\"stub\" in x", false, true, shape);
  out +=
      "\n\ndef sanity_checks_for_pypi_installation():\n    pass\n\n\ndef _load_core_library():\n    return None\n\n\n"
      "if \"NVTE_PROJECT_BUILDING\" not in os.environ or bool(int(os.getenv(\"NVTE_RELEASE_BUILD\", \"0\"))):\n";
  if (shape.sanity_checks) out += "    sanity_checks_for_pypi_installation()\n";
  out += "    _CUDNN_LIB_CTYPES = _load_cudnn()\n    _NVRTC_LIB_CTYPES = _load_nvrtc()\n";
  if (shape.curand) out += "    _CURAND_LIB_CTYPES = _load_curand()\n";
  out +=
      "    _CUBLAS_LIB_CTYPES = _load_nvidia_cuda_library(\"cublas\")\n"
      "    _CUDART_LIB_CTYPES = _load_nvidia_cuda_library(\"cuda_runtime\")\n    _TE_LIB_CTYPES = _load_core_library()\n";
  return out;
}

std::string te_shared_init() {
  return R"(import ctypes
import functools
import glob
import os
import sysconfig


@functools.lru_cache(maxsize=None)
def _get_sys_extension():
    return ".so"


@functools.lru_cache(maxsize=None)
def _load_cuda_library_from_python(lib_name, strict=False):
    ext = _get_sys_extension()
    nvidia_dir = os.path.join(sysconfig.get_path("purelib"), "nvidia")
    path_found = False
    if os.path.isdir(os.path.join(nvidia_dir, "cu13", lib_name)):
        so_paths = glob.glob(os.path.join(nvidia_dir, "cu13", lib_name, f"lib/lib*{ext}.*[0-9]"))
        path_found = len(so_paths) > 0
    if not path_found and os.path.isdir(os.path.join(nvidia_dir, "cu13")):
        so_paths = glob.glob(os.path.join(nvidia_dir, "cu13", f"lib/lib{lib_name}*{ext}.*[0-9]"))
        path_found = len(so_paths) > 0
    if not path_found and os.path.isdir(os.path.join(nvidia_dir, lib_name)):
        so_paths = glob.glob(os.path.join(nvidia_dir, lib_name, f"lib/lib*{ext}.*[0-9]"))
        path_found = len(so_paths) > 0
    if not path_found:
        so_paths = glob.glob(os.path.join(nvidia_dir, f"cuda_{lib_name}", f"lib/lib*{ext}.*[0-9]"))
        path_found = len(so_paths) > 0
    handles = []
    if path_found:
        for so_path in so_paths:
            handles.append(ctypes.CDLL(so_path, mode=ctypes.RTLD_GLOBAL))
    if strict and not path_found:
        raise RuntimeError(f"{lib_name} shared object not found.")
    return path_found, handles


@functools.lru_cache(maxsize=None)
def _load_cuda_library_from_system(lib_name):
    paths = (
        os.environ.get(f"{lib_name.upper()}_HOME"),
        os.environ.get(f"{lib_name.upper()}_PATH"),
        os.environ.get("CUDA_HOME"),
        os.environ.get("CUDA_PATH"),
        "/usr/local/cuda",
    )
    for path in paths:
        if path is None:
            continue
        libs = glob.glob(f"{path}/**/lib{lib_name}{_get_sys_extension()}*", recursive=True)
        libs = [lib for lib in libs if "stub" not in lib]
        libs.sort(reverse=True, key=os.path.basename)
        if libs:
            return True, ctypes.CDLL(libs[0], mode=ctypes.RTLD_GLOBAL)
    try:
        handle = ctypes.CDLL(f"lib{lib_name}{_get_sys_extension()}", mode=ctypes.RTLD_GLOBAL)
        return True, handle
    except OSError:
        return False, None


@functools.lru_cache(maxsize=None)
def _load_cuda_library(lib_name):
    found, handle = _load_cuda_library_from_system(lib_name)
    if found:
        return True, handle
    found, handle = _load_cuda_library_from_python(lib_name)
    if found:
        return False, handle
    raise RuntimeError(f"{lib_name} shared object not found.")


def _load_core_library():
    return None


if "NVTE_PROJECT_BUILDING" not in os.environ or bool(int(os.getenv("NVTE_RELEASE_BUILD", "0"))):
    _, _CUDNN_LIB_CTYPES = _load_cuda_library("cudnn")
    system_nvrtc, _NVRTC_LIB_CTYPES = _load_cuda_library("nvrtc")
    system_curand, _CURAND_LIB_CTYPES = _load_cuda_library("curand")
    load_libs_for_no_ctk = not system_nvrtc and not system_curand
    if load_libs_for_no_ctk:
        _CUBLAS_LIB_CTYPES = _load_cuda_library_from_python("cublas", strict=True)
        _CUDART_LIB_CTYPES = _load_cuda_library_from_python("cudart", strict=True)
        _CUDNN_ALL_LIB_CTYPES = _load_cuda_library_from_python("cudnn", strict=True)
    _TE_LIB_CTYPES = _load_core_library()
)";
}

}  // namespace envdoctor::test
