// Package dl loads a shared library at run time (dlopen) and resolves its
// entry points (dlsym), for the in-process readers of vendor libraries
// (internal/detect/nvidia/nvml, internal/detect/amd/amdsmi). It is cgo on
// Linux; other builds have no Open and the readers do without it (their
// !(linux && cgo) files).
package dl
