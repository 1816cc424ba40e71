package abi

// ExportTemplate compiles one capability into a request template the host
// fills natively for each call (see internal/model/request): once per
// capability and catalog digest instead of one guest entry per backend
// request. TemplateRequest → request.Answer (internal/model/request).
// Optional: a module without it, or a capability the engine cannot
// template, is compiled per call with ExportCompile.
const ExportTemplate = "plasm_template"

// TemplateRequest names the capability to template.
type TemplateRequest struct {
	EntryID    string `json:"entry_id"`
	Capability string `json:"capability"`
}
