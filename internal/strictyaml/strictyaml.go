// Package strictyaml decodes configuration YAML the one way sagebench
// accepts it: strict (an unknown key is an error naming it) and safe
// (goccy/go-yaml panics on some malformed input, such as a tagged mapping
// where a list belongs; a file is outside input, so that becomes an
// error, never a crash) and bounded (a document over MaxBytes or nested
// deeper than MaxDepth is refused before the decoder sees a byte: the
// decoder needs gigabytes for a 100k-deep one). ReadFile reads a file
// with the same size cap, so /dev/zero is an error, not an endless read.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/sagebench/sagebench/internal/redact"
)

// Unmarshal decodes data into v with yaml.Strict() and opts. A document
// over MaxBytes or MaxDepth is refused (see Check) before the decoder sees
// it, and so is one whose aliases expand past MaxAliasNodes (see
// CheckAliases, on the parsed tree). A decoder error is returned as the library formats it (with line and
// column); a decoder panic is returned as a "malformed YAML" error.
func Unmarshal(data []byte, v any, opts ...yaml.DecodeOption) (err error) {
	if _, err := Parse(data); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			err = nil // a syntax error: the decoder reports it in its own words
		}
		if err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed YAML (the decoder failed: %v)", r)
		}
	}()
	return yaml.UnmarshalWithOptions(data, v, append([]yaml.DecodeOption{yaml.Strict()}, opts...)...)
}

// Parse parses data into a syntax tree (for callers that walk nodes, such
// as a config with per-section decoding), refusing a document over the
// bounds (see Check) first and one whose aliases expand past
// MaxAliasNodes after: the parser alone needs 650 MB for a 20k-deep
// document. A parser panic is returned as a "malformed YAML" error.
func Parse(data []byte) (f *ast.File, err error) {
	if err := Check(data); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (the parser failed: %v)", r)
		}
	}()
	if f, err = parser.ParseBytes(data, 0); err != nil {
		return nil, err
	}
	if err := CheckAliases(f); err != nil {
		return nil, err
	}
	return f, nil
}

// DecodeNode decodes an already parsed node into v, strict and safe like
// Unmarshal.
func DecodeNode(n ast.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed YAML (the decoder failed: %v)", r)
		}
	}()
	return yaml.NodeToValue(n, v, yaml.Strict())
}

// OneLine is err of the document src at path as one line: "path:line:col:
// message (at `the line`)" for a decoder error that knows its position
// (goccy formats one as several lines with a source excerpt and a caret;
// the line, clipped, names the key), err wrapped under path otherwise. With
// path "", the same without it, for a caller that names the file itself.
func OneLine(path string, src []byte, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil || ye.GetToken().Position == nil {
		if path == "" {
			return err
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	p := ye.GetToken().Position
	where := fmt.Sprintf("%d:%d", p.Line, p.Column)
	if path != "" {
		where = path + ":" + where
	}
	msg := FirstLine(ye.GetMessage())
	if lines := bytes.Split(src, []byte("\n")); p.Line >= 1 && p.Line <= len(lines) {
		if l := strings.TrimSpace(string(lines[p.Line-1])); l != "" {
			msg += fmt.Sprintf(" (at %q)", redact.Clip(l, 80))
		}
	}
	return fmt.Errorf("%s: %s", where, msg)
}

// FirstLine is s trimmed to its first line (a YAML error message whose
// library formatting spans several).
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
