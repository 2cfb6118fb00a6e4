// shop — a C++ program whose functions have mangled names, for the names
// people read (demangled) in every output and in --trace specs: a method
// (shop::Cart::total, _ZNK4shop4Cart5totalEi), a function template
// (shop::scale<long>) and a lambda's operator().
// usage: shop CALLS — calls Cart::total CALLS times (and the others too);
// prints "calls=N sum=S".
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace shop {

class Cart {
public:
	explicit Cart(int n) : items(n, 3) {}
	__attribute__((noinline)) long total(int rounds) const
	{
		long s = 0;
		for (int r = 0; r < rounds; r++)
			for (int v : items)
				s += v * (r + 1);
		return s;
	}

private:
	std::vector<int> items;
};

template <typename T> __attribute__((noinline)) T scale(T x, int k)
{
	volatile T y = x;
	for (int i = 0; i < k; i++)
		y = y * 3 + 1;
	return y;
}

} // namespace shop

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	shop::Cart cart(4000);
	long sum = 0;
	auto tally = [&](long i) __attribute__((noinline)) { sum += shop::scale<long>(i, 2000); };
	for (long i = 0; i < n; i++) {
		sum += cart.total(20);
		tally(i);
	}
	printf("calls=%ld sum=%ld\n", n, sum);
	return 0;
}
