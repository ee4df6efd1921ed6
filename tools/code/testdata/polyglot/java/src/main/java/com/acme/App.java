package com.acme;

import com.acme.util.Registry;
import com.google.common.collect.ImmutableList;

/** The application. */
public class App {
  public static void main(String[] args) {
    // Register every argument.
    for (String a : ImmutableList.copyOf(args)) {
      Registry.getInstance().add(a);
    }
  }
}
