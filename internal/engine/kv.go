package engine

// CacheType is a KV cache type a request may ask for (kv_cache_dtype).
type CacheType struct {
	Name string
	// BytesPerElement is the storage of one cached value, its block's
	// scales included.
	BytesPerElement float64
}

// CommonCacheTypes are the KV cache types every request may ask for,
// whatever its engine: the model's 16-bit types and one byte per element
// (each engine writes its own flags for them, or says it has none).
var CommonCacheTypes = []CacheType{{"fp16", 2}, {"bf16", 2}, {"fp8", 1}, {"int8", 1}}

// CacheTypes are the names of every KV cache type a request may ask for:
// CommonCacheTypes, then each engine's in registration order, each once.
func CacheTypes() []string {
	return append([]string(nil), current.Load().cacheNames...)
}

// LookupCacheType is the cache type of that (lower-case) name; "" (the
// model's 16-bit type, asked for by most requests) is none.
func LookupCacheType(name string) (CacheType, bool) {
	if name == "" {
		return CacheType{}, false
	}
	t, ok := current.Load().cacheTypes[name]
	return t, ok
}
