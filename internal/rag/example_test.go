package rag_test

import (
	"fmt"

	"github.com/sagebench/sagebench/internal/rag"
)

func ExampleDecodeTxn() {
	t := rag.Txn{Seq: 3, Query: "who wrote the gaizou report", QueryDoc: 17, TopK: 5}
	payload := rag.AppendTxn(nil, &t) // what travels in runtime.Record.Payload
	got, err := rag.DecodeTxn(payload)
	if err != nil {
		panic(err)
	}
	fmt.Println(got.Seq, got.Query, got.QueryDoc, got.TopK)
	_, err = rag.DecodeTxn(payload[:4])
	fmt.Println(err)
	// Output:
	// 3 who wrote the gaizou report 17 5
	// rag: malformed transaction payload: length 27 too large
}
