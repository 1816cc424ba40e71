// Command sizecheck fails when non-test Go source outgrows what a reader
// can hold: a file over 800 lines, or a function over 100 lines whose doc
// comment does not say why it stays whole (the words "stays whole"). It is
// run by `make lint`.
//
// Usage: go run ./internal/sizecheck [dir]
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const (
	maxFileLines = 800
	maxFuncLines = 100
	reasonMarker = "stays whole"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	problems, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sizecheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// check walks root and returns one line per violation.
func check(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			out = append(out, fmt.Sprintf("%s: %d lines (limit %d): split it by concern", path, n, maxFileLines))
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
			if end-start+1 <= maxFuncLines {
				continue
			}
			if fn.Doc != nil && strings.Contains(fn.Doc.Text(), reasonMarker) {
				continue
			}
			out = append(out, fmt.Sprintf("%s:%d: func %s is %d lines (limit %d): split it, or say in its doc comment why it %s",
				path, start, fn.Name.Name, end-start+1, maxFuncLines, reasonMarker))
		}
		return nil
	})
	return out, err
}
