package doccheck

import "go/ast"

// FieldDocs are the doc comments of the fields of the struct types a
// declaration holds, by field name: the comment above a field, else the
// one after it on its line. The generated references (the HTTP API's
// schemas, switchboard.yaml's fields) read their descriptions with it.
func FieldDocs(decl *ast.GenDecl) map[string]string {
	out := map[string]string{}
	for _, spec := range decl.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			text := f.Doc.Text()
			if text == "" {
				text = f.Comment.Text()
			}
			for _, n := range f.Names {
				out[n.Name] = text
			}
		}
	}
	return out
}
