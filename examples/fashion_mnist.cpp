// fashion_mnist: the main job (in progress).
int main() { return 0; }
