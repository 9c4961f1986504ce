package runconfig

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/sagebench/sagebench/internal/strictyaml"
	"github.com/sagebench/sagebench/internal/workload"
)

// File is a parsed config file: the shared keys already decoded, the qN
// sections kept as YAML nodes until the workloads they configure exist.
type File struct {
	Path     string
	src      []byte
	sections map[string]ast.Node
}

// section captures the node of a qN key.
type section struct{ node ast.Node }

func (s *section) UnmarshalYAML(n ast.Node) error { s.node = n; return nil }

// fileDoc is the top level of a config file.
type fileDoc struct {
	Shared `yaml:",inline"`
	Q1     section `yaml:"q1"`
	Q2     section `yaml:"q2"`
	Q3     section `yaml:"q3"`
	Q4     section `yaml:"q4"`
	Q5     section `yaml:"q5"`
	Q6     section `yaml:"q6"`
	Q7     section `yaml:"q7"`
	Q8     section `yaml:"q8"`
}

// LoadFile reads path (relative to the working directory), substitutes
// ${VAR} and ${VAR:-default} from lookup, and decodes its top-level keys
// strictly over shared. Unknown keys are errors naming their path.
func LoadFile(path string, shared *Shared, lookup LookupEnv) (*File, error) {
	raw, err := strictyaml.ReadFile(path) // bounded: -c /dev/zero is an error, not a 3 GB read
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return ParseConfig(path, raw, shared, lookup)
}

// ParseConfig is LoadFile on the bytes of a file named name.
func ParseConfig(name string, raw []byte, shared *Shared, lookup LookupEnv) (*File, error) {
	src, err := Expand(string(raw), lookup)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	f := &File{Path: name, src: []byte(src), sections: map[string]ast.Node{}}
	// Size and nesting are bounded before any YAML parser sees the bytes
	// (a 100k-deep document took 19.5 GB in the parser alone).
	if err := strictyaml.Check(f.src); err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	if empty, err := isEmptyYAML(f.src); err != nil || empty {
		return f, f.wrapErr(err) // an empty file (or only comments) changes nothing
	}
	doc := fileDoc{Shared: *shared}
	if err := strictyaml.Unmarshal(f.src, &doc); err != nil {
		return nil, f.wrap(err)
	}
	*shared = doc.Shared
	for key, s := range map[string]section{"q1": doc.Q1, "q2": doc.Q2, "q3": doc.Q3, "q4": doc.Q4,
		"q5": doc.Q5, "q6": doc.Q6, "q7": doc.Q7, "q8": doc.Q8} {
		if s.node != nil {
			f.sections[key] = s.node
		}
	}
	return f, nil
}

// Decode decodes the section of spec (if the file has one) strictly into
// cfg. A file without the section leaves cfg as it is.
func (f *File) Decode(spec workload.Spec, cfg workload.Config) error {
	if f == nil {
		return nil
	}
	n, ok := f.sections[spec.Section()]
	if !ok || n.Type() == ast.NullType {
		return nil
	}
	if err := strictyaml.DecodeNode(n, cfg); err != nil {
		return f.wrap(err)
	}
	return nil
}

func isEmptyYAML(src []byte) (bool, error) {
	file, err := parser.ParseBytes(src, 0)
	if err != nil {
		return false, err
	}
	for _, d := range file.Docs {
		if d.Body != nil && d.Body.Type() != ast.CommentType {
			return false, nil
		}
	}
	return true, nil
}

func (f *File) wrapErr(err error) error {
	if err == nil {
		return nil
	}
	return f.wrap(err)
}

// quoted finds the first "..." of an error message (a bad value).
var quoted = regexp.MustCompile(`"([^"]+)"`)

// wrap turns a YAML error into one line: file:line:col: key.path: message.
// Errors without a position (e.g. a bad duration) are located by the
// value they quote.
func (f *File) wrap(err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		msg := strictyaml.FirstLine(err.Error())
		if m := quoted.FindStringSubmatch(msg); m != nil {
			if where := find(f.src, func(mv *ast.MappingValueNode) *token.Token {
				if mv.Value != nil && strings.Trim(mv.Value.String(), `"'`) == m[1] {
					return mv.Value.GetToken()
				}
				return nil
			}); where != "" {
				return fmt.Errorf("config %s:%s: %s", f.Path, where, msg)
			}
		}
		return fmt.Errorf("config %s: %s", f.Path, msg)
	}
	tk := ye.GetToken()
	where := fmt.Sprintf("%s:%d:%d", f.Path, tk.Position.Line, tk.Position.Column)
	if p := keyPath(f.src, tk); p != "" {
		where += ": " + p
	}
	return fmt.Errorf("config %s: %s", where, strictyaml.FirstLine(ye.GetMessage()))
}

// keyPath finds the mapping entry whose key or value is at tk's position
// and returns its dotted path, e.g. q2.slo.llm_ttft.
func keyPath(src []byte, tk *token.Token) string {
	var path string
	find(src, func(mv *ast.MappingValueNode) *token.Token {
		for _, c := range []ast.Node{mv.Key, mv.Value} {
			if c != nil && samePos(c.GetToken(), tk.Position) {
				path = nodePath(mv)
				return c.GetToken()
			}
		}
		return nil
	})
	return path
}

// find walks the mapping entries of src until match returns a token, and
// returns "line:col: key.path" of that entry ("" when none matched).
func find(src []byte, match func(*ast.MappingValueNode) *token.Token) string {
	file, err := parser.ParseBytes(src, 0)
	if err != nil {
		return ""
	}
	v := &finder{match: match}
	for _, d := range file.Docs {
		if d.Body != nil && v.found == "" {
			ast.Walk(v, d.Body)
		}
	}
	return v.found
}

type finder struct {
	match func(*ast.MappingValueNode) *token.Token
	found string
}

func (f *finder) Visit(n ast.Node) ast.Visitor {
	if f.found != "" || n == nil {
		return nil
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		if tk := f.match(mv); tk != nil && tk.Position != nil {
			f.found = fmt.Sprintf("%d:%d: %s", tk.Position.Line, tk.Position.Column, nodePath(mv))
			return nil
		}
	}
	return f
}

// nodePath is the dotted key path of a mapping entry.
func nodePath(mv *ast.MappingValueNode) string {
	p := strings.TrimPrefix(strings.TrimPrefix(mv.GetPath(), "$"), ".")
	if k := mv.Key.String(); !strings.HasSuffix(p, k) {
		p = strings.TrimPrefix(p+"."+k, ".")
	}
	return p
}

func samePos(tk *token.Token, pos *token.Position) bool {
	return tk != nil && tk.Position != nil && pos != nil &&
		tk.Position.Line == pos.Line && tk.Position.Column == pos.Column
}

// deprecated are the keys that go away after this release, each with what
// it is read as; a key counts where it is used (block or flow style, not
// in a comment) with a value other than 0.
var deprecated = []struct {
	used *regexp.Regexp
	key  string
	note string
}{
	{regexp.MustCompile(`(?m)^(?:[^#\n]*[\s{,-])?prompt_words:[ \t]*[1-9]`), "prompt_words", "it is read as input_tokens (a count of tokens now, not words) and goes away after this release; write input_tokens"},
	{regexp.MustCompile(`(?m)^(?:[^#\n]*[\s{,-])?query_words:[ \t]*[1-9]`), "query_words", "it is read as q1.question_tokens (a count of tokens now, not words) and goes away after this release; write question_tokens"},
}

// Deprecated lists the deprecated keys the file uses, each with what to
// write instead (one line each; none for a nil file).
func (f *File) Deprecated() []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, d := range deprecated {
		if d.used.Match(f.src) {
			out = append(out, f.Path+": "+d.key+" is deprecated: "+d.note)
		}
	}
	return out
}
