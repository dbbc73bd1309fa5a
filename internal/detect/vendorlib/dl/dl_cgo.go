//go:build linux && cgo

package dl

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

// dlerror is read in the same C call as the failed dlopen: its text is per
// thread and the next dl call replaces it.
static void *hw_dlopen(const char *path, const char **err) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		*err = e ? e : "";
	}
	return h;
}
static void *hw_dlsym(void *lib, const char *name) { return dlsym(lib, name); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Open loads the library at path with RTLD_NOW | RTLD_LOCAL and returns
// its handle; the error holds dlerror's text.
func Open(path string) (unsafe.Pointer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg *C.char
	h := C.hw_dlopen(cpath, &msg)
	if h == nil {
		return nil, fmt.Errorf("dlopen %s: %s", path, C.GoString(msg))
	}
	return h, nil
}

// Sym is the address of name in the library h, nil when it has none.
func Sym(h unsafe.Pointer, name string) unsafe.Pointer {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	return C.hw_dlsym(h, cn)
}
