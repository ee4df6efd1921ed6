package com.acme.util;

import java.util.ArrayList;
import java.util.List;

public class Registry {
  private static Registry instance;
  private final List<String> names = new ArrayList<>();

  private Registry() {}

  public static synchronized Registry getInstance() {
    if (instance == null) {
      instance = new Registry();
    }
    return instance;
  }

  public void add(String name) {
    names.add(name);
  }
}
