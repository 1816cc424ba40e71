package demo

import (
	"fmt"

	"github.com/plasmd/plasmd/internal/model/catalog"
	"github.com/plasmd/plasmd/internal/runtime/catalogdir"
)

// LoadCatalogs loads every embedded demo catalog and points it at the
// backend running at baseURL (Server.URL()).
func LoadCatalogs(baseURL string) ([]*catalog.Catalog, error) {
	cats, err := catalogdir.LoadAll(Catalogs, "catalogs")
	if err != nil {
		return nil, fmt.Errorf("demo catalogs: %w", err)
	}
	for _, c := range cats {
		c.HTTPBackend = Rebase(c.HTTPBackend, baseURL)
	}
	return cats, nil
}
