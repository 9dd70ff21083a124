"gpu.module"() ({
  "gpu.func"() ({
    "gpu.return"() : () -> ()
  }) {"sym_name" = "k", "function_type" = () -> (), "gpu.kernel"} : () -> ()
}) {"sym_name" = "m"} : () -> ()
