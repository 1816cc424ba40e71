package core

import (
	"github.com/plasmd/plasmd/guest/abi"
	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/model/extract"
)

// vendorCells gives the rows a vendor module decoded the cells the
// standard decoder would have made of the same values
// (docs/catalog-format.md, "Numbers"), through the decoder's own rule
// (extract.Cell with extract.ColumnType), so the two cannot drift apart: a
// number in a text column becomes its literal text; an integer column
// holds int64s, or the exact digits of an integer beyond int64, whether
// the module wrote 1000, 1000.0, 1e3 or "1000"; a number column holds
// float64s. A module's answer crosses the ABI as JSON read with
// json.Number, so the literal is exactly what the module wrote. Without
// this a text id would be output as a JSON number (which JavaScript
// clients cannot hold beyond 2^53), and 1.5e+19 or "42" in an integer
// column would sort and filter as a float64 or as text. Columns the
// entity does not declare are read as untyped ones are.
func vendorCells(c *catalog.Catalog, capability, relation string, t *abi.Table) {
	ent := rowEntity(c, capability, relation)
	if ent == nil || t == nil {
		return
	}
	for i, col := range t.Columns {
		typ := ""
		if f := ent.Fields[col]; f != nil {
			typ = extract.ColumnType(c, c.Values[f.ValueRef])
		}
		for _, row := range t.Rows {
			if i < len(row) && row[i] != nil {
				row[i] = extract.Cell(row[i], typ)
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
