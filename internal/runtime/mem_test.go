package runtime_test

import goruntime "runtime"

func heapInUse() int64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
