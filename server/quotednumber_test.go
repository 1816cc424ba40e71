package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

const priceDomain = `version: 1
http_backend: http://price.invalid
values:
  id: {type: integer}
  price: {type: number}
  qty: {type: integer}
entities:
  Item:
    id_field: id
    fields:
      id: {value_ref: id}
      price: {value_ref: price}
      qty: {value_ref: qty}
capabilities:
  item_query: {kind: query, entity: Item}
`

const priceMappings = `item_query:
  method: GET
  path: [{type: literal, value: items}]
  response: {items: data}
`

// TestQuotedNumberFilter: a quoted literal in a filter on a number field
// (the planner accepts one; the lexer tells users to quote integers beyond
// int64) compares as the number it spells, in ordering and equality. As
// text, price > "5" matched neither 10.5 ("1" < "5") nor, rightly, 3.25,
// and price > "10000000000000000000" matched 9.5.
func TestQuotedNumberFilter(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"id":1,"price":10.5,"qty":7},{"id":2,"price":3.25,"qty":12},{"id":3,"price":9.5,"qty":5}]}`)
	}))
	defer backend.Close()
	f := catalogFixture(t, "price", map[string]string{"domain.yaml": priceDomain, "mappings.yaml": priceMappings}, backend.URL)
	path := f.open(t, "price", "Item")
	checkListEnd(t, f, path, []listEndCase{
		{`Item{price > "5"}.sort(id)[id]`, "1 3"},
		{`Item{price < "10000000000000000000"}.sort(id)[id]`, "1 2 3"},
		{`Item{price > "10000000000000000000"}.sort(id)[id]`, ""},
		{`Item{price >= "10.50"}.sort(id)[id]`, "1"},
		{`Item{price = "3.250"}.sort(id)[id]`, "2"},
		{`Item{qty >= "007"}.sort(id)[id]`, "1 2"},
		{`Item{qty = "012"}.sort(id)[id]`, "2"},
	})
}
