package policies_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocsClassifierMatchesExample keeps the anthropic-sdk-go classifier shown
// in docs/client.md identical to the one the examples and SDK tests run.
func TestDocsClassifierMatchesExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/client.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_client_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fromDoc, fromSrc := funcText(string(doc), "classifySDK"), funcText(string(src), "classifySDK")
	if fromDoc == "" || fromDoc != fromSrc {
		t.Errorf("docs/client.md's classifySDK differs from example_client_test.go's:\ndocs:\n%s\nexample:\n%s", fromDoc, fromSrc)
	}
}

// funcText returns the text of func name, from its signature to the first
// closing brace at the start of a line.
func funcText(s, name string) string {
	start := strings.Index(s, "func "+name+"(")
	if start < 0 {
		return ""
	}
	end := strings.Index(s[start:], "\n}\n")
	if end < 0 {
		return ""
	}
	return s[start : start+end+2]
}
