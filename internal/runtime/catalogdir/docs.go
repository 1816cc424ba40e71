package catalogdir

import "strings"

// DocPath is where the catalog format reference lives in the repository.
const DocPath = "docs/catalog-format.md"

// DocURL is the reference link for one section ("" for none).
func DocURL(section string) string {
	if section == "" {
		return ""
	}
	return DocPath + "#" + section
}

// docSections maps the first word of a problem's context to the section
// of docs/catalog-format.md that documents it.
var docSections = map[string]string{
	"top level":        "domain-file",
	"version":          "domain-file",
	"description":      "domain-file",
	"http_backend":     "domain-file",
	"registry_aliases": "domain-file",
	"auth":             "auth",
	"values":           "values",
	"entities":         "entities",
	"capabilities":     "capabilities",
	"module":           "vendor-module",
	"oauth":            "oauth",
	"views":            "views",
	"schema_overlay":   "plasm-only-keys",
	"mappings":         "mappings",
}

// DocSection names the section of the format reference that explains e,
// from the key path its message starts with.
func DocSection(e *Error) string {
	switch {
	case strings.HasSuffix(e.File, ModuleFile):
		return "vendor-module"
	case strings.HasPrefix(e.Msg, "a catalog file holds one YAML document"):
		return "yaml"
	}
	ctx, _, ok := strings.Cut(e.Msg, ":")
	if !ok {
		if strings.Contains(e.Msg, "not a catalog") || strings.Contains(e.Msg, "missing: a catalog directory") {
			return "layout"
		}
		return ""
	}
	if strings.HasPrefix(e.Msg, "YAML ") || strings.HasPrefix(e.Msg, "invalid YAML") {
		return "yaml"
	}
	head, rest, _ := strings.Cut(ctx, ".")
	head, _, _ = strings.Cut(head, "[")
	rest += "." // "entities.Issue.fields: …" is about fields too
	if s, ok := docSections[head]; ok {
		switch {
		case head == "entities" && strings.Contains(rest, ".relations."):
			return "relations"
		case head == "entities" && strings.Contains(rest, ".fields."):
			return "fields"
		case head == "capabilities" && strings.Contains(rest, ".parameters"):
			return "parameters"
		}
		return s
	}
	// Anything else is a mapping, named by its capability.
	for _, k := range []string{"query", "body", "headers"} {
		if strings.Contains(ctx, "."+k) {
			return "cml-expressions"
		}
	}
	switch {
	case strings.Contains(ctx, ".pagination"):
		return "pagination"
	case strings.Contains(ctx, ".response"):
		return "response"
	case strings.Contains(ctx, ".path"):
		return "path"
	}
	if strings.HasSuffix(e.File, MappingsFile) || strings.HasSuffix(e.File, CombinedSuffix) {
		return "mappings"
	}
	return ""
}
