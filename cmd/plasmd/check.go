package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// checkReport is the --json form of plasmd catalog check.
type checkReport struct {
	OK       bool           `json:"ok"`
	Catalogs []checkCatalog `json:"catalogs"`
	Errors   []checkProblem `json:"errors"`
}

type checkCatalog struct {
	EntryID       string           `json:"entry_id"`
	Path          string           `json:"path"`
	Entities      int              `json:"entities"`
	Capabilities  int              `json:"capabilities"`
	Relations     int              `json:"relations"`
	Digest        string           `json:"sha256"`
	NotExecutable []checkExclusion `json:"not_executable"`
	Warnings      []checkProblem   `json:"warnings"`
}

type checkExclusion struct {
	Capability string `json:"capability"`
	Reason     string `json:"reason"`
}

type checkProblem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
	Doc     string `json:"doc,omitempty"`
}

// checkCatalogs validates catalogs: each PATH is a catalog directory, a
// .cgs.yaml file or a directory of catalogs. It prints one summary line per
// catalog (and its warnings and not-executable capabilities), or a JSON
// report, and fails when any catalog is broken or a path holds none.
func checkCatalogs(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("catalog check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print a JSON report on stdout instead of text")
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: plasmd catalog check [--json] PATH…") }
	if err := fs.Parse(args); err != nil {
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		fs.Usage()
		return 2
	}
	rep := checkReport{OK: true, Catalogs: []checkCatalog{}, Errors: []checkProblem{}}
	for _, p := range paths {
		loaded, err := loadReport(p)
		for _, l := range loaded {
			rep.Catalogs = append(rep.Catalogs, summarize(p, l))
		}
		if err != nil {
			rep.OK = false
			rep.Errors = append(rep.Errors, problems(err)...)
		} else if len(loaded) == 0 {
			rep.OK = false
			rep.Errors = append(rep.Errors, checkProblem{File: p, Message: "holds no catalog (a catalog is a directory with domain.yaml and mappings.yaml, or a *.cgs.yaml file)", Doc: catalogdir.DocURL("layout")})
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "plasmd:", err)
			return 1
		}
	} else {
		printReport(rep, stdout, stderr)
	}
	if !rep.OK {
		return 1
	}
	return 0
}

// loadReport loads one path: a catalog, or a directory of catalogs.
func loadReport(p string) ([]catalogdir.Loaded, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() || isCatalogDir(p) {
		l, err := catalogdir.LoadPathReport(p)
		if err != nil {
			return nil, err
		}
		return []catalogdir.Loaded{l}, nil
	}
	return catalogdir.LoadDirReport(p)
}

// isCatalogDir reports whether dir itself is a catalog rather than a
// directory of them.
func isCatalogDir(dir string) bool {
	if fileExists(filepath.Join(dir, catalogdir.DomainFile)) || fileExists(filepath.Join(dir, catalogdir.MappingsFile)) {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*"+catalogdir.CombinedSuffix))
	var files int
	for _, f := range m {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			files++
		}
	}
	// A single combined file is a catalog directory; several are a
	// directory of catalogs.
	return files == 1
}

func summarize(path string, l catalogdir.Loaded) checkCatalog {
	c := l.Catalog
	out := checkCatalog{EntryID: c.EntryID, Path: path, Entities: len(c.Entities), Capabilities: len(c.Capabilities), Digest: c.Digest,
		NotExecutable: []checkExclusion{}, Warnings: []checkProblem{}}
	for _, e := range c.Entities {
		out.Relations += len(e.Relations)
	}
	for name, cp := range c.Capabilities {
		if cp.Unavailable != "" {
			out.NotExecutable = append(out.NotExecutable, checkExclusion{Capability: name, Reason: cp.Unavailable})
		}
	}
	sort.Slice(out.NotExecutable, func(i, j int) bool { return out.NotExecutable[i].Capability < out.NotExecutable[j].Capability })
	out.Warnings = append(out.Warnings, problems(l.Warnings)...)
	return out
}

// problems converts a load error into reported problems, each linked to
// the section of the format reference that explains it.
func problems(err error) []checkProblem {
	var list catalogdir.ErrorList
	if !errors.As(err, &list) {
		return []checkProblem{{Message: strings.TrimPrefix(err.Error(), "catalogdir: ")}}
	}
	out := make([]checkProblem, 0, len(list))
	for _, e := range list {
		out = append(out, checkProblem{File: e.File, Line: e.Line, Column: e.Column, Message: e.Msg, Doc: catalogdir.DocURL(catalogdir.DocSection(e))})
	}
	return out
}

func (p checkProblem) String() string {
	e := catalogdir.Error{File: p.File, Line: p.Line, Column: p.Column, Msg: p.Message}
	if p.Doc == "" {
		return e.Error()
	}
	return e.Error() + " (see " + p.Doc + ")"
}

func printReport(rep checkReport, stdout, stderr io.Writer) {
	for _, c := range rep.Catalogs {
		fmt.Fprintf(stdout, "ok  %s  %d entities, %d capabilities, %d relations, %d warnings  sha256:%s\n",
			c.EntryID, c.Entities, c.Capabilities, c.Relations, len(c.Warnings), c.Digest)
		for _, x := range c.NotExecutable {
			fmt.Fprintf(stdout, "    not executable here: %s: %s\n", x.Capability, x.Reason)
		}
		for _, w := range c.Warnings {
			fmt.Fprintf(stdout, "    warning: %s\n", w)
		}
	}
	for _, e := range rep.Errors {
		fmt.Fprintln(stderr, e)
	}
}
