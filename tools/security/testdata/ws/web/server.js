const { exec } = require('child_process');
const crypto = require('crypto');
const https = require('https');

function handler(db, req) {
  const q = `SELECT * FROM orders WHERE id = ${req.query.id}`;
  db.query('SELECT * FROM items WHERE name = ' + req.query.name);
  exec(req.query.cmd);
  eval(req.body.code);
  const h = crypto.createHash('md5').update(req.body.pw).digest('hex');
  const agent = new https.Agent({ rejectUnauthorized: false });
  const sessionToken = Math.random().toString(36);
  const c = crypto.createCipheriv('des-ede3-cbc', key, iv);
  return [q, h, agent, sessionToken, c];
}

module.exports = { handler };
