package q7

// TableFailed is the key of the result's failed-requests table
// (result.Table.Key), stable whatever its title says.
const TableFailed = "failed_requests"
