// Command server starts the example service.
package main

import (
	"fmt"
	"net/http"

	"example.com/poly/internal/handler"
)

func main() {
	/* The handler is wrapped
	   in the logging middleware. */
	h := handler.Logging(handler.New())
	fmt.Println("listening")
	_ = http.ListenAndServe(":8080", h) // blocks
}
