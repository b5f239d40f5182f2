#include "capture/rdma_maps.hpp"

#include <elf.h>
#include <sys/sysmacros.h>

#include <charconv>
#include <cstring>

namespace skewscope::rdma {
namespace {

bool hex(std::string_view s, std::uint64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// Splits off the next space-separated field.
std::string_view field(std::string_view& line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  auto end = line.find(' ');
  std::string_view f = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return f;
}

template <typename T>
bool read_at(std::string_view elf, std::uint64_t offset, T& out) {
  if (offset > elf.size() || elf.size() - offset < sizeof(T)) return false;
  std::memcpy(&out, elf.data() + offset, sizeof(T));
  return true;
}

std::string_view cstring_at(std::string_view elf, std::uint64_t table, std::uint64_t table_size, std::uint64_t index) {
  if (index >= table_size || table > elf.size() || elf.size() - table < table_size) return {};
  std::string_view s = elf.substr(table + index, table_size - index);
  return s.substr(0, s.find('\0'));
}

}  // namespace

std::vector<Mapping> parse_maps(std::string_view text) {
  std::vector<Mapping> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    std::string_view range = field(line), perms = field(line), offset = field(line), dev = field(line),
                     inode = field(line);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    Mapping m;
    auto dash = range.find('-');
    auto colon = dev.find(':');
    std::uint64_t major = 0, minor = 0;
    if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() < 3 ||
        !hex(range.substr(0, dash), m.start) || !hex(range.substr(dash + 1), m.end) || !hex(offset, m.file_offset) ||
        !hex(dev.substr(0, colon), major) || !hex(dev.substr(colon + 1), minor))
      continue;
    auto r = std::from_chars(inode.data(), inode.data() + inode.size(), m.inode);
    if (r.ec != std::errc{} || m.inode == 0 || line.empty() || line.front() != '/') continue;
    if (line.ends_with(" (deleted)")) continue;  // the file is gone: nothing to attach to
    m.dev = makedev(major, minor);
    m.executable = perms[2] == 'x';
    m.path = std::string(line);
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<Located> locate(const std::vector<Mapping>& maps, std::uint64_t address) {
  for (const auto& m : maps)
    if (address >= m.start && address < m.end) return Located{&m, address - m.start + m.file_offset};
  return std::nullopt;
}

bool is_libibverbs(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with("libibverbs.so");
}

Result<std::uint64_t> versioned_symbol_offset(std::string_view elf, std::string_view name, std::string_view version) {
  using Offset = Result<std::uint64_t>;
  Elf64_Ehdr eh;
  if (!read_at(elf, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) {
    return Offset::fail("not an ELF64 file");
  }
  Elf64_Shdr dynsym{}, dynstr{}, versym{}, verdef{};
  bool have_dynsym = false, have_versym = false, have_verdef = false;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!read_at(elf, eh.e_shoff + std::uint64_t{i} * eh.e_shentsize, sh)) break;
    if (sh.sh_type == SHT_DYNSYM) {
      dynsym = sh;
      have_dynsym = read_at(elf, eh.e_shoff + std::uint64_t{sh.sh_link} * eh.e_shentsize, dynstr);
    } else if (sh.sh_type == SHT_GNU_versym) {
      versym = sh, have_versym = true;
    } else if (sh.sh_type == SHT_GNU_verdef) {
      verdef = sh, have_verdef = true;
    }
  }
  if (!have_dynsym) {
    return Offset::fail("no .dynsym");
  }
  // Version index -> name, from the chain of Elf64_Verdef entries.
  auto version_name = [&](std::uint16_t index) -> std::string_view {
    if (!have_verdef) return {};
    std::uint64_t at = verdef.sh_offset;
    for (unsigned n = 0; n < verdef.sh_info; ++n) {
      Elf64_Verdef vd;
      if (!read_at(elf, at, vd)) return {};
      if (vd.vd_ndx == index) {
        Elf64_Verdaux aux;
        if (!read_at(elf, at + vd.vd_aux, aux)) return {};
        return cstring_at(elf, dynstr.sh_offset, dynstr.sh_size, aux.vda_name);
      }
      if (vd.vd_next == 0) break;
      at += vd.vd_next;
    }
    return {};
  };
  std::optional<std::uint64_t> vaddr;
  const std::uint64_t count = dynsym.sh_entsize ? dynsym.sh_size / dynsym.sh_entsize : 0;
  for (std::uint64_t i = 0; i < count && !vaddr; ++i) {
    Elf64_Sym sym;
    if (!read_at(elf, dynsym.sh_offset + i * dynsym.sh_entsize, sym)) break;
    if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    if (cstring_at(elf, dynstr.sh_offset, dynstr.sh_size, sym.st_name) != name) continue;
    std::uint16_t ver = 0;
    if (have_versym && !read_at(elf, versym.sh_offset + i * 2, ver)) break;
    if (!have_versym || version_name(static_cast<std::uint16_t>(ver & 0x7fff)) == version) vaddr = sym.st_value;
  }
  if (!vaddr) {
    return Offset::fail(std::string(name) + "@" + std::string(version) + " is not defined");
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!read_at(elf, eh.e_phoff + std::uint64_t{i} * eh.e_phentsize, ph)) break;
    if (ph.p_type == PT_LOAD && *vaddr >= ph.p_vaddr && *vaddr < ph.p_vaddr + ph.p_filesz)
      return Offset::ok(*vaddr - ph.p_vaddr + ph.p_offset);
  }
  return Offset::fail(std::string(name) + " lies in no loadable segment");
}

}  // namespace skewscope::rdma
