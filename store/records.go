package store

import "go.mongodb.org/mongo-driver/v2/mongo"

// Records reads and writes the records of one project's tables, one collection per table.
type Records struct {
	db *mongo.Database
}

// NewRecords serves the tables kept in db.
func NewRecords(db *mongo.Database) *Records { return &Records{db: db} }
