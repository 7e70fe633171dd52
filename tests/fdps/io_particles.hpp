#pragma once
// The particle and header types of the particle-file tests, with FDPS-style record readers and
// writers (fscanf/fprintf, fread/fwrite), as users write them.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "grove/grove.hpp"

namespace grove::io_testing {

struct IoParticle {
  std::int64_t id = -1;
  double mass = 0.0;
  Vec3d pos;
  double payload[3] = {0, 0, 0};

  Vec3d getPos() const { return pos; }

  // %a keeps every bit of a double through text.
  void writeAscii(std::FILE* fp) const {
    std::fprintf(fp, "%lld %a %a %a %a %a %a %a\n", static_cast<long long>(id), mass, pos.x, pos.y, pos.z, payload[0],
                 payload[1], payload[2]);
  }
  void readAscii(std::FILE* fp) {
    long long i = 0;
    if (std::fscanf(fp, "%lld %la %la %la %la %la %la %la", &i, &mass, &pos.x, &pos.y, &pos.z, &payload[0], &payload[1],
                    &payload[2]) == 8)
      id = i;
  }
  void writeBinary(std::FILE* fp) const { std::fwrite(this, sizeof(*this), 1, fp); }
  void readBinary(std::FILE* fp) {
    if (std::fread(this, sizeof(*this), 1, fp) != 1) id = -2;
  }
  // A second record format, chosen by passing the member (FDPS's pFunc overloads).
  void writeAsciiIdFirstAndLast(std::FILE* fp) const {
    std::fprintf(fp, "<%lld> %a %a %a %a %a %a %a <%lld>\n", static_cast<long long>(id), mass, pos.x, pos.y, pos.z,
                 payload[0], payload[1], payload[2], static_cast<long long>(id));
  }
  void readAsciiIdFirstAndLast(std::FILE* fp) {
    long long i = 0, j = 0;
    if (std::fscanf(fp, " <%lld> %la %la %la %la %la %la %la <%lld>", &i, &mass, &pos.x, &pos.y, &pos.z, &payload[0],
                    &payload[1], &payload[2], &j) == 9 &&
        i == j)
      id = i;
  }
};

inline bool samePayload(const IoParticle& a, const IoParticle& b) {
  return a.id == b.id && a.mass == b.mass && a.pos == b.pos && a.payload[0] == b.payload[0] &&
         a.payload[1] == b.payload[1] && a.payload[2] == b.payload[2];
}

// Announces the count, as FDPS's sample headers do.
struct CountingHeader {
  long long n_body = 0;
  double time = 0.0;
  long long readAscii(std::FILE* fp) {
    if (std::fscanf(fp, "%lld %la\n", &n_body, &time) != 2) return -1;
    return n_body;
  }
  void writeAscii(std::FILE* fp) const { std::fprintf(fp, "%lld %a\n", n_body, time); }
  int readBinary(std::FILE* fp) {
    if (std::fread(&n_body, sizeof n_body, 1, fp) != 1 || std::fread(&time, sizeof time, 1, fp) != 1) return -1;
    return static_cast<int>(n_body);
  }
  void writeBinary(std::FILE* fp) const {
    std::fwrite(&n_body, sizeof n_body, 1, fp);
    std::fwrite(&time, sizeof time, 1, fp);
  }
};

// Knows only the time: the records are counted.
struct TimeOnlyHeader {
  double time = 0.0;
  int readAscii(std::FILE* fp) {
    if (std::fscanf(fp, "%la\n", &time) != 1) time = -1.0;
    return -1;
  }
  void writeAscii(std::FILE* fp) const { std::fprintf(fp, "%a\n", time); }
  int readBinary(std::FILE* fp) {
    if (std::fread(&time, sizeof time, 1, fp) != 1) time = -1.0;
    return -1;
  }
  void writeBinary(std::FILE* fp) const { std::fwrite(&time, sizeof time, 1, fp); }
};

inline IoParticle makeIoParticle(std::int64_t id) {
  IoParticle p;
  p.id = id;
  p.mass = 1.0 / 3.0 + static_cast<double>(id) * 1e-7;
  p.pos = {std::sin(static_cast<double>(id)), std::cos(0.7 * static_cast<double>(id)),
           1e-300 * static_cast<double>(id)};
  p.payload[0] = static_cast<double>(id) / 7.0;
  p.payload[1] = -1e300;
  p.payload[2] = static_cast<double>(id % 13) * 0.1;
  return p;
}

}  // namespace grove::io_testing
