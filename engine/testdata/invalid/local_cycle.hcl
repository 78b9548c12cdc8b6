# Locals that need each other.
# want: 5:3 Cycle in local values
# detail: local.a -> local.b -> local.c -> local.a
locals {
  a = local.b + 1
  b = local.c + 1
  c = local.a + 1
}
