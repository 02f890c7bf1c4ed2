package web

// Update is -update, for the tests of package web_test.
var Update = updateFlag

// IndentJSON is indentJSON, for the golden files.
var IndentJSON = indentJSON

// OpenAPIJSON is the committed document, as the binary serves it.
var OpenAPIJSON = openapiJSON
