import ctypes
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
    _, _CUDNN = _load_cuda_library("cudnn")
    system_nvrtc, _NVRTC = _load_cuda_library("nvrtc")
    system_curand, _CURAND = _load_cuda_library("curand")
    load_libs_for_no_ctk = not system_nvrtc and not system_curand
    if load_libs_for_no_ctk:
        _CUBLAS = _load_cuda_library_from_python("cublas", strict=True)
        _CUDART = _load_cuda_library_from_python("cudart", strict=True)
        _CUDNN_ALL = _load_cuda_library_from_python("cudnn", strict=True)
    _TE = _load_core_library()
