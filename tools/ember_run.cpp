// ember-run: launches a distributed job (torchrun's twin).
int main() { return 0; }
