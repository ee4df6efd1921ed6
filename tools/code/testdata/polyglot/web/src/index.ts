import express from "express";
import { greet } from "./greet";

/**
 * The web entry point.
 */
const app = express();
app.use((req, res, next) => next());
app.get("/", (req, res) => res.send(greet("web")));
app.listen(3000);
