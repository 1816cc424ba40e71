package core

import (
	"encoding/json"

	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// textCells gives the rows a vendor module decoded the standard decoder's
// rule for numbers in text fields (docs/catalog-format.md): a number in a
// column whose field is text becomes its literal text. A module's answer
// crosses the ABI as JSON read with json.Number, so the literal is exactly
// what the module wrote; without this a text id would be output as a JSON
// number, which JavaScript clients cannot hold beyond 2^53.
func textCells(c *catalog.Catalog, capability, relation string, t *abi.Table) {
	ent := rowEntity(c, capability, relation)
	if ent == nil || t == nil {
		return
	}
	for i, col := range t.Columns {
		f := ent.Fields[col]
		if f == nil || !extract.ValueIsText(c, c.Values[f.ValueRef]) {
			continue
		}
		for _, row := range t.Rows {
			if i < len(row) {
				if n, ok := row[i].(json.Number); ok {
					row[i] = string(n)
				}
			}
		}
	}
}

// rowEntity is the entity whose rows a decode of capability (or of its
// embedded relation) yields.
func rowEntity(c *catalog.Catalog, capability, relation string) *catalog.Entity {
	if c == nil || c.Capabilities[capability] == nil {
		return nil
	}
	ent := c.Entities[c.Capabilities[capability].Entity]
	if ent == nil || relation == "" {
		return ent
	}
	if rel := ent.Relations[relation]; rel != nil {
		return c.Entities[rel.Target]
	}
	return nil
}
