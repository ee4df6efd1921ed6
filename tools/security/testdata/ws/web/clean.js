const { execFile } = require('child_process');
const crypto = require('crypto');

// eval(userInput) and exec(cmd) are mentioned only in this comment.
function handler(db, req) {
  db.query('SELECT * FROM items WHERE name = $1', [req.query.name]);
  execFile('ls', ['-l']);
  const h = crypto.createHash('sha256').update('x').digest('hex');
  const id = crypto.randomUUID();
  const delay = Math.random() * 100;
  const label = "SELECT is a word; exec(x) too";
  return [h, id, delay, label];
}

module.exports = { handler };
