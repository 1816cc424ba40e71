package server

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/server/internal/tenant"
)

// ErrCatalogLimit is a catalog over the catalog limits of a tenant that
// may use it.
var ErrCatalogLimit = errors.New("catalog over a tenant's catalog limits")

// catalogSize is what a catalog costs each instance that installs it.
type catalogSize struct {
	bytes, entities, capabilities int
}

func sizeOf(c *catalog.Catalog) (catalogSize, error) {
	// The sandbox installs the JSON encoding, so its length is the cost.
	b, err := json.Marshal(c)
	if err != nil {
		return catalogSize{}, fmt.Errorf("catalog %q: encode: %w", c.EntryID, err)
	}
	return catalogSize{bytes: len(b), entities: len(c.Entities), capabilities: len(c.Capabilities)}, nil
}

// checkCatalogLimits refuses, at load, a catalog a tenant may use that is
// over that tenant's max_catalog_* limits, naming the catalog, the tenant,
// the figure and the limit. A large catalog only ever costs the calls that
// name it (instances install catalogs on first use), but a tenant's limits
// say how large a catalog its calls may have to install at all.
func checkCatalogLimits(set *tenant.Set, cats []*catalog.Catalog) error {
	if set == nil {
		return nil
	}
	sizes := make(map[string]catalogSize, len(cats))
	for _, c := range cats {
		sz, err := sizeOf(c)
		if err != nil {
			return err
		}
		sizes[c.EntryID] = sz
	}
	for _, t := range set.All() {
		l := t.Limits
		for _, c := range cats {
			if !t.Allows(c.EntryID) {
				continue
			}
			sz := sizes[c.EntryID]
			for _, chk := range []struct {
				name       string
				got, limit int
			}{
				{"max_catalog_bytes", sz.bytes, l.MaxCatalogBytes},
				{"max_catalog_entities", sz.entities, l.MaxCatalogEntities},
				{"max_catalog_capabilities", sz.capabilities, l.MaxCatalogCapabilities},
			} {
				if chk.limit > 0 && chk.got > chk.limit {
					return fmt.Errorf("%w: catalog %q has %d (%s %d) for tenant %s; raise the limit or leave the catalog out of the tenant's catalogs",
						ErrCatalogLimit, c.EntryID, chk.got, chk.name, chk.limit, t.ID)
				}
			}
		}
	}
	return nil
}
