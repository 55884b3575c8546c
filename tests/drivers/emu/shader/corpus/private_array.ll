; private_array.ll: a small dynamically indexed private array (promoted to VGPRs with M0-relative
; moves) and a large one (scratch).
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @small_array(ptr addrspace(1) noalias %out, ptr addrspace(1) noalias readonly %a, i32 %k) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %arr = alloca [8 x i32], align 4, addrspace(5)
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %pi = getelementptr inbounds [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %val = add i32 %i, %tx
  store i32 %val, ptr addrspace(5) %pi, align 4
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 8
  br i1 %c, label %fill, label %use
use:
  %kk = and i32 %k, 7
  %pk = getelementptr inbounds [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %kk
  store i32 77, ptr addrspace(5) %pk, align 4
  %j = and i32 %tx, 7
  %pj = getelementptr inbounds [8 x i32], ptr addrspace(5) %arr, i32 0, i32 %j
  %v = load i32, ptr addrspace(5) %pj, align 4
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tx
  store i32 %v, ptr addrspace(1) %po, align 4
  ret void
}

define amdgpu_kernel void @big_array(ptr addrspace(1) noalias %out, i32 %k) #0 {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %arr = alloca [64 x i32], align 4, addrspace(5)
  br label %fill
fill:
  %i = phi i32 [ 0, %entry ], [ %i1, %fill ]
  %pi = getelementptr inbounds [64 x i32], ptr addrspace(5) %arr, i32 0, i32 %i
  %val = mul i32 %i, %tx
  store volatile i32 %val, ptr addrspace(5) %pi, align 4
  %i1 = add i32 %i, 1
  %c = icmp ult i32 %i1, 64
  br i1 %c, label %fill, label %use
use:
  %kk = and i32 %k, 63
  %pk = getelementptr inbounds [64 x i32], ptr addrspace(5) %arr, i32 0, i32 %kk
  %v = load volatile i32, ptr addrspace(5) %pk, align 4
  %po = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tx
  store i32 %v, ptr addrspace(1) %po, align 4
  ret void
}

attributes #0 = { nounwind "amdgpu-flat-work-group-size"="32,32" }
