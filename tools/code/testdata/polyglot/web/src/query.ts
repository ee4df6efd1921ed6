export class QueryBuilder {
  private parts: string[] = [];

  where(cond: string): QueryBuilder {
    this.parts.push(cond);
    return this;
  }

  limit(n: number): QueryBuilder {
    this.parts.push(`limit ${n}`);
    return this;
  }

  build(): string {
    return this.parts.join(" ");
  }
}
