package cli

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

// outputFlag is where a command writes: -o/--out, and --output-dir as
// its synonym (the name `run` uses), on every command that writes files.
type outputFlag struct {
	out, dir string
	def      string
}

// bind registers -o/--out and --output-dir with default def.
func (o *outputFlag) bind(f *pflag.FlagSet, def, usage string) {
	o.def = def
	f.StringVarP(&o.out, "out", "o", "", usage+" (default "+def+")")
	f.StringVar(&o.dir, "output-dir", "", "the same as -o/--out")
}

// path is the output path: -o or --output-dir (both only when they
// agree), else the default.
func (o *outputFlag) path() (string, error) {
	switch {
	case o.out != "" && o.dir != "" && filepath.Clean(o.out) != filepath.Clean(o.dir):
		return "", usageErrorf("-o %s and --output-dir %s name different places; give one", o.out, o.dir)
	case o.out != "":
		return o.out, nil
	case o.dir != "":
		return o.dir, nil
	}
	return o.def, nil
}

// makeDir creates dir (and its parents) as `run --output-dir` does: a
// path that exists and is not a directory, or cannot be created, is a
// usage error naming it.
func makeDir(dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usageErrorf("%s is a file, not a directory; choose another with -o/--output-dir", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErrorf("output dir %s is not usable: %v; choose another with -o/--output-dir", dir, err)
	}
	return nil
}

// makeParent creates the directory a file is written into.
func makeParent(file string) error {
	if dir := filepath.Dir(file); dir != "." {
		return makeDir(dir)
	}
	return nil
}
