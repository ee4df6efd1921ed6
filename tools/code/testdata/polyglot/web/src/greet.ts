// Greeting helpers.
export function greet(name: string): string {
  return name.length > 0 ? `hello ${name}` : "hello";
}

export function unusedThing(): number {
  return 42;
}
