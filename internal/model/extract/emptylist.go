package extract

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A list page without rows is the end of the list, so a 200 answer that
// is an error in disguise (a rate limit, an expired cursor) must not be
// read as one: pages 1..n-1 would be answered as the whole list. This file
// decides when a page without its list, or with an empty one, is refused.

// nullOrMissing decides a list page whose list is absent: the key at
// path[i] is missing (missing) or the value there is null. Gmail answers an
// empty search with 200 {"resultSizeEstimate":0} and no "messages" key
// (proto3 JSON omits empty lists), and many backends write an empty list
// as null, so on a first page both are an empty page (nil), and a null is
// on a later page too (a Go backend's nil slice ends its list so), and so
// is a missing one on a later page (later) when obj has other data
// ({"resultSizeEstimate":0}, {"total":"100"}) or nothing ({}): proto3 and
// Google-style backends omit an empty list on any page. But a later page
// whose keys are all messages (onlyMessages) is refused: rate-limit
// answers come in shapes no list of error signs covers
// ({"message":"Too many requests"}). And beside an error sign (errorSign),
// at the top level or in obj, the object that should hold the list, an
// absent list is refused on any page (Slack's
// {"ok":false,"error":"ratelimited"}, GraphQL's {"data":null,"errors":[…]}).
// The refusal names the expected path, the keys present and the backend's
// own words.
func nullOrMissing(doc any, obj map[string]any, path []string, i int, missing, later bool) error {
	sign, text, obj := signNear(doc, obj)
	if !sign && !(missing && later && onlyMessages(obj)) {
		return nil
	}
	at := "at the top level"
	if i > 0 {
		at = "at " + where(path[:i])
	}
	if !sign {
		said := ""
		if m := messageText(obj, ""); m != "" {
			said = "; it says " + m
		}
		return noListError(fmt.Sprintf("the list is expected at %s, and this answer, a later page of the list, has no %q %s (its keys: %s)%s; a later page without its list is refused rather than read as the end of the list, which would answer the pages before it as the whole list",
			where(path), path[i], at, keyList(obj), said))
	}
	what := fmt.Sprintf("has no %q %s", path[i], at)
	if !missing {
		what = fmt.Sprintf("has null at %s", where(path[:i+1]))
	}
	return noListError(fmt.Sprintf("the list is expected at %s, and this answer %s (its keys: %s) beside an error sign (%s); a page without its list next to an error is refused rather than read as empty",
		where(path), what, keyList(obj), text))
}

// nullAt is nullOrMissing for a null at path[:j+1], judged beside the
// object holding it.
func nullAt(doc any, path []string, j int) error {
	parent, _ := walkIndexed(doc, path[:j])
	obj, _ := parent.(map[string]any)
	return nullOrMissing(doc, obj, path, j, false, false)
}

// emptyAt refuses an empty list at path beside an error sign at the top
// level, the envelope ({"ok":false,"error":"ratelimited","items":[]},
// {"data":{"items":[]},"errors":[…]}): read as a normal last page it would
// end the list there. The object holding a nested list is not looked at:
// a present list is the backend's answer, and a status or error there is
// the resource's own ({"run":{"status":"failed","steps":[]}}).
func emptyAt(doc any, path []string) error {
	obj, _ := doc.(map[string]any)
	sign, text := errorSign(obj)
	if !sign {
		return nil
	}
	return noListError(fmt.Sprintf("the list at %s is empty beside an error sign (%s) (its keys: %s); an empty page next to an error is refused rather than read as the end of the list",
		where(path), text, keyList(obj)))
}

// signNear looks for an error sign in obj, then at the top level of doc;
// it returns the object whose keys a refusal lists (obj, or the top level
// when obj is nil).
func signNear(doc any, obj map[string]any) (bool, string, map[string]any) {
	sign, text := errorSign(obj)
	if top, ok := doc.(map[string]any); !sign && ok {
		sign, text = errorSign(top)
		if obj == nil {
			obj = top
		}
	}
	return sign, text, obj
}

// maxErrorText bounds each piece of the backend's text quoted in a
// refusal.
const maxErrorText = 200

// errorKeys are the keys whose value, when it says something (present),
// is an error sign: the common ones, Jira's errorMessages and WeChat's
// errcode. Keys match case-insensitively (AWS writes "Error").
var errorKeys = []string{"error", "errors", "fault", "errormessages", "errcode"}

// messageKeys hold a backend's explanation beside an error sign.
var messageKeys = []string{"message", "errmsg", "msg", "error_description", "detail"}

// onlyMessages reports whether obj has keys and all are messageKeys (in
// any case): an answer that only explains itself, not a page.
func onlyMessages(obj map[string]any) bool {
	for k := range obj {
		if !slices.ContainsFunc(messageKeys, func(m string) bool { return strings.EqualFold(k, m) }) {
			return false
		}
	}
	return len(obj) > 0
}

// errorSign reports whether obj carries a backend's error sign, and its
// text (truncated): a key of errorKeys whose value says something, "ok"
// or "success" false, or a JSend "status" of error or fail. The text adds
// the backend's message beside it, if any.
func errorSign(obj map[string]any) (bool, string) {
	if len(obj) == 0 {
		return false, ""
	}
	keys := sortedKeys(obj)
	for _, name := range errorKeys {
		if k, v, ok := lookupFold(obj, keys, name); ok && present(v) {
			return true, k + ": " + errorText(v) + messageSuffix(obj, k)
		}
	}
	for _, name := range []string{"ok", "success"} {
		if k, v, ok := lookupFold(obj, keys, name); ok && v == false {
			return true, k + ": false" + messageSuffix(obj, k)
		}
	}
	if k, v, ok := lookupFold(obj, keys, "status"); ok {
		if s, _ := v.(string); failStatus(s) {
			return true, k + ": " + errorText(s) + messageSuffix(obj, k)
		}
	}
	return false, ""
}

// lookupFold finds name among obj's keys (sorted), as written first, else
// case-insensitively.
func lookupFold(obj map[string]any, keys []string, name string) (string, any, bool) {
	if v, ok := obj[name]; ok {
		return name, v, true
	}
	for _, k := range keys {
		if strings.EqualFold(k, name) {
			return k, obj[k], true
		}
	}
	return "", nil, false
}

// failStatus reports a JSend-style status that says the call failed.
func failStatus(s string) bool {
	for _, f := range []string{"error", "fail", "failed", "failure"} {
		if strings.EqualFold(s, f) {
			return true
		}
	}
	return false
}

// messageText quotes the first message-like string in obj other than the
// key skip, as `key: "text"`, or "".
func messageText(obj map[string]any, skip string) string {
	keys := sortedKeys(obj)
	for _, name := range messageKeys {
		for _, k := range keys {
			if k == skip || !strings.EqualFold(k, name) {
				continue
			}
			if s, ok := obj[k].(string); ok && s != "" {
				return k + ": " + errorText(s)
			}
		}
	}
	return ""
}

func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func messageSuffix(obj map[string]any, skip string) string {
	if m := messageText(obj, skip); m != "" {
		return ", " + m
	}
	return ""
}

// present reports whether an error key's value says something: not null,
// false, "", a string that reads as zero ("0", "0000", "0.0"), a zero
// number or an empty list or object ({"error":0}, WeChat's {"errcode":0}
// are successes).
func present(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		f, err := strconv.ParseFloat(t, 64)
		return t != "" && (err != nil || f != 0)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		return err != nil || f != 0
	case int64:
		return t != 0
	case float64:
		return t != 0
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}

// errorText renders an error value compactly, truncated to maxErrorText
// bytes on a rune boundary.
func errorText(v any) string {
	var s string
	if str, ok := v.(string); ok {
		s = strconv.Quote(str)
	} else if b, err := json.Marshal(v); err == nil {
		s = string(b)
	} else {
		s = fmt.Sprint(v)
	}
	if len(s) <= maxErrorText {
		return s
	}
	cut := maxErrorText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// noListError is a read's answer without its list (see nullOrMissing).
type noListError string

func (e noListError) Error() string { return string(e) }
